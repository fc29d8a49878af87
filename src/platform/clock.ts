import type { ScaledClock } from './workflow/clock';

export { realTimeOf, scaledTimeOf, type ScaledClock } from './workflow/clock';

const PROCESS_START_MS = Date.now();

/**
 * This process's calendar under DURAPAY_TIME_SCALE (workflow/clock.ts), counted from its start,
 * so that the API and the sandbox it mounts share it.
 */
export function processClock(timeScale: number): ScaledClock {
  return { originMs: PROCESS_START_MS, scale: timeScale };
}
