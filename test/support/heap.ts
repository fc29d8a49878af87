/**
 * The heap a test's code still holds: measured after a full garbage collection, so that what a
 * stream has read and let go (garbage not yet collected, which depends on when V8 chose to
 * collect) is not counted as memory it keeps.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Bytes of heap in use once everything unreachable has been collected. A full collection costs
 * in proportion to the whole process's heap (seconds in a test worker that ran many files):
 * sample it a few times over a long read, not at every step.
 */
export function liveHeapBytes(): number {
  gc();
  return process.memoryUsage().heapUsed;
}
