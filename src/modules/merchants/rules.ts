/** Merchants (SPEC §5.1–5.5): states, profit-sharing configuration and upload rules. */

/** `created` → `auditing` → `active` (sub_merchant_no set) or `rejected` (may apply again). */
export const MERCHANT_STATUSES = ['created', 'auditing', 'active', 'rejected'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

/** 1–64 characters of [A-Za-z0-9_-] (SPEC §5.1). */
export const MERCHANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const DEFAULT_MAX_SHARING_RATIO = 0.3;
export const MAX_SHARING_RECEIVERS = 50;

/** One receiver of a merchant's profit sharing; an order's sharing amount is split by weight. */
export interface SharingReceiver {
  type: string;
  account: string;
  name?: string;
  weight: number;
}

/**
 * A merchant's profit-sharing configuration (SPEC §5.1, beyond the seed), stored and shown in
 * exactly this form: `max_ratio` is the largest share of an order's amount that may be shared,
 * in (0, 1], always present once stored (0.30 when the client left it out).
 */
export interface MerchantProfitSharing {
  receivers: SharingReceiver[];
  max_ratio: number;
}

/** Upload rules (SPEC §5.5, §9). */
export const UPLOAD_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/bmp', 'application/pdf'] as const;
export type UploadMediaType = (typeof UPLOAD_MEDIA_TYPES)[number];
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
/**
 * An upload's body beside its file: the text parts (64 KiB at most), every part's headers and
 * boundaries. Generous for a form of three parts, and small enough that nothing else rides in it.
 */
export const UPLOAD_FORM_BYTES = 128 * 1024;
export const MAX_UPLOAD_FILE_NAME = 255;

export function isUploadMediaType(value: string): value is UploadMediaType {
  return (UPLOAD_MEDIA_TYPES as readonly string[]).includes(value);
}

/**
 * A bank account as get and list show it (SPEC §5.2): every character but the last 4 replaced
 * by `*`, the length kept. An account of 4 characters or fewer is masked entirely: showing its
 * "last 4" would show all of it. Counted in code points, so no character is split.
 */
export function maskBankAccount(account: string | null): string | null {
  if (account === null) return null;
  const chars = Array.from(account);
  if (chars.length <= 4) return '*'.repeat(chars.length);
  return '*'.repeat(chars.length - 4) + chars.slice(-4).join('');
}

/**
 * The base name of an uploaded file's name, whichever separator the client's system uses:
 * `../../etc/passwd` → `passwd`, `C:\\x\\scan.pdf` → `scan.pdf`. Control characters are
 * dropped; a name that ends up empty, `.` or `..` becomes `file`.
 */
export function uploadBaseName(name: string | null | undefined): string {
  const last = (name ?? '').split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = last.replace(/[\x00-\x1f\x7f]/g, '').trim();
  return clean === '' || clean === '.' || clean === '..' ? 'file' : clean;
}
