/**
 * The one lock of durapay's workflows: a workflow whose message handlers must not interleave
 * (an order's creates, closes and refunds; an application's submits) runs each of them, and
 * its own main-loop steps, through `runExclusive`, one at a time in arrival order (FIFO).
 *
 * A `condition(() => !busy)` gate is not a lock: when `busy` turns false, every waiting
 * handler's condition resolves in the same activation and all of them run, and handlers
 * delivered in one activation pass it together.
 */
import { Mutex } from 'async-mutex';

export interface HandlerLock {
  /** Runs `fn` once every earlier caller's `fn` has settled; releases on success and failure. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Whether some `fn` is running or waiting (continue-as-new waits until none is). */
  isLocked(): boolean;
}

/** A FIFO mutex (async-mutex): deterministic, promises only, no timers. */
export function handlerLock(): HandlerLock {
  const mutex = new Mutex();
  return {
    runExclusive: (fn) => mutex.runExclusive(fn),
    isLocked: () => mutex.isLocked(),
  };
}
