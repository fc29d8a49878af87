import dayjs, { type Dayjs } from 'dayjs';

/** Fen as yuan with two decimals: 12345 → "123.45". */
export function yuan(fen: unknown): string {
  if (typeof fen !== 'number' && typeof fen !== 'string') return '—';
  const n = Number(fen);
  if (!Number.isFinite(n)) return '—';
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(n));
  const whole = Math.floor(abs / 100).toLocaleString('en-US');
  const cents = String(abs % 100).padStart(2, '0');
  return `${sign}${whole}.${cents}`;
}

/** Yuan as typed in a form (a number with up to 2 decimals) to fen, without float drift. */
export function toFen(yuanValue: number): number {
  return Math.round(yuanValue * 100);
}

/** Fen to yuan as a number, for a form's initial value. */
export function toYuan(fen: number): number {
  return fen / 100;
}

/** An RFC 3339 instant in the browser's local time: "2026-11-22 13:31:02". */
export function localTime(value: unknown): string {
  if (typeof value !== 'string' || !value) return '—';
  const d = dayjs(value);
  return d.isValid() ? d.format('YYYY-MM-DD HH:mm:ss') : value;
}

/** A local day range as the API's instants: `from` the first day's start, `to` after the last. */
export function rangeToInstants(range: [Dayjs | null, Dayjs | null] | null | undefined): {
  from?: string;
  to?: string;
} {
  if (!range) return {};
  const [start, end] = range;
  return {
    from: start ? start.startOf('day').toISOString() : undefined,
    to: end ? end.add(1, 'day').startOf('day').toISOString() : undefined,
  };
}

/** The instants of `rangeToInstants` back as the picker's days. */
export function instantsToRange(from?: string, to?: string): [Dayjs | null, Dayjs | null] | undefined {
  if (!from && !to) return undefined;
  return [from ? dayjs(from) : null, to ? dayjs(to).subtract(1, 'millisecond') : null];
}

/** A value of unknown shape as short text for a table cell. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return JSON.stringify(value);
}

/** The browser's own random UUID, or one from getRandomValues where the page is not a secure context. */
export function uuid(): string {
  if (typeof crypto.randomUUID === 'function' && window.isSecureContext) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `snake_case` → "Snake case", for headings made from field names. */
export function humanize(key: string): string {
  const s = key.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
