import { toDataURL } from 'qrcode';

/**
 * A QR code of `text` as a PNG data URL, ready for an `<img src>` (SPEC §8a: a `qr_code` pay
 * credential comes with its rendered image). Error correction M survives a smudged screen; four
 * pixels a module and a two-module quiet zone keep it about 1–2 KiB for a checkout URL.
 */
export function qrImage(text: string): Promise<string> {
  return toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, scale: 4 });
}
