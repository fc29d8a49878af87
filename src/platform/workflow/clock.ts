/**
 * A calendar that may run faster than real time (DURAPAY_TIME_SCALE): `scale` real milliseconds
 * pass per calendar millisecond, counted from `originMs`. At scale 1 (production) it is real time.
 * Pure, so that workflows use it too; platform/clock.ts's `processClock` reads the process's start.
 */
export interface ScaledClock {
  originMs: number;
  scale: number;
}

export function scaledTimeOf(clock: ScaledClock, realMs: number): number {
  if (clock.scale === 1) return realMs;
  return Math.round(clock.originMs + (realMs - clock.originMs) / clock.scale);
}

export function realTimeOf(clock: ScaledClock, scaledMs: number): number {
  if (clock.scale === 1) return scaledMs;
  return Math.round(clock.originMs + (scaledMs - clock.originMs) * clock.scale);
}
