import jsQR from 'jsqr';

const SVG_DATA_URL = /^data:image\/svg\+xml;base64,/;
const PIXELS_PER_UNIT = 4;

/**
 * Draws an SVG QR code the way an SVG renderer would: its viewBox, a white background, and the
 * dark modules as one stroked path of unit-wide horizontal lines (`M`/`m` moves, `h` runs, each
 * stroke centred half a unit below its top edge). Anything else in the path is refused, so a
 * change of shape fails loudly instead of decoding by luck.
 */
function rasterize(svg: string): { data: Uint8ClampedArray; width: number; height: number } {
  const box = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  const path = /<path stroke="#000000" d="([^"]*)"/.exec(svg);
  if (!box || !path) throw new Error('not an SVG QR code: no viewBox or no stroked path');
  const [cols, rows] = [Number(box[1]), Number(box[2])];
  const width = cols * PIXELS_PER_UNIT;
  const height = rows * PIXELS_PER_UNIT;
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  let x = 0;
  let y = 0;
  for (const [, cmd, args] of path[1]!.matchAll(/([A-Za-z])([^A-Za-z]*)/g)) {
    const n = args!
      .trim()
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
    if (cmd === 'M' || cmd === 'm') {
      if (n.length !== 2) throw new Error(`unexpected ${cmd} arguments: ${args}`);
      x = cmd === 'M' ? n[0]! : x + n[0]!;
      y = cmd === 'M' ? n[1]! : y + n[1]!;
    } else if (cmd === 'h') {
      if (n.length !== 1) throw new Error(`unexpected h arguments: ${args}`);
      const row = Math.floor(y); // a 1-unit stroke centred on y covers [y - 0.5, y + 0.5)
      for (let col = x; col < x + n[0]!; col++) {
        for (let dy = 0; dy < PIXELS_PER_UNIT; dy++) {
          for (let dx = 0; dx < PIXELS_PER_UNIT; dx++) {
            const i = ((row * PIXELS_PER_UNIT + dy) * width + col * PIXELS_PER_UNIT + dx) * 4;
            data[i] = data[i + 1] = data[i + 2] = 0;
          }
        }
      }
      x += n[0]!;
    } else {
      throw new Error(`unexpected path command ${cmd}`);
    }
  }
  return { data, width, height };
}

/** The text an SVG QR code (as a data URL) encodes, read back by an independent decoder. */
export function decodeQrDataUrl(dataUrl: string): string | undefined {
  if (!SVG_DATA_URL.test(dataUrl)) throw new Error(`not an SVG data URL: ${dataUrl.slice(0, 40)}`);
  const svg = Buffer.from(dataUrl.replace(SVG_DATA_URL, ''), 'base64').toString('utf8');
  const { data, width, height } = rasterize(svg);
  return jsQR(data, width, height)?.data;
}
