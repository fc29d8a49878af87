import { randomBytes } from 'node:crypto';

export interface Part {
  name: string;
  value?: string;
  filename?: string;
  contentType?: string;
  content?: Buffer;
}

/** multipart/form-data (RFC 7578) as exact bytes, so the Content-Digest covers what is sent. */
export function multipart(
  parts: Part[],
  boundary = `test-${randomBytes(12).toString('hex')}`,
): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType !== undefined) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), p.content ?? Buffer.from(p.value ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
