import jsQR from 'jsqr';
import { PNG } from 'pngjs';

/** The text a PNG QR code (as a data URL) encodes, read back by an independent decoder. */
export function decodeQrDataUrl(dataUrl: string): string | undefined {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}
