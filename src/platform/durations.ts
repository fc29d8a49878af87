/** Durations written as `500ms`, `5s`, `5m`, `2h`, `1d`. Pure, so workflows may use it too. */
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration like 500ms, 5s, 5m, 2h or 1d`);
  return Math.round(Number(match[1]) * UNITS[match[2]!]!);
}

export function parseDurationList(text: string): number[] {
  return text.split(',').map(parseDuration);
}

/** Applies DURAPAY_TIME_SCALE; never below 1 ms so that a timer still orders events. */
export function scaleDuration(ms: number, scale: number): number {
  return Math.max(1, Math.round(ms * scale));
}
