/**
 * A zip writer for statements as Alipay packs them: entry names are GBK bytes without the zip's
 * UTF-8 flag (bit 11), which the zip libraries on npm do not write (they encode every name as
 * UTF-8 and flag it). Deflated entries, streamed: sizes and CRCs follow each entry in a data
 * descriptor, so a million-line statement never sits in memory. On node:zlib alone.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { crc32, createDeflateRaw } from 'node:zlib';

export interface ZipEntry {
  /** The name's bytes as stored (Alipay's are GBK). */
  name: Buffer;
  content: Iterable<Buffer | string> | AsyncIterable<Buffer | string>;
}

/** Bit 3: CRC and sizes follow the data. Bit 11 (names are UTF-8) is never set. */
const FLAGS = 0x0008;
const DEFLATE = 8;
const VERSION = 20;

/** MS-DOS time and date of a moment, in Beijing time as Alipay's files carry it. */
function dosTime(at: Date): { time: number; date: number } {
  const b = new Date(at.getTime() + 8 * 3_600_000);
  return {
    time: (b.getUTCHours() << 11) | (b.getUTCMinutes() << 5) | (b.getUTCSeconds() >> 1),
    date: ((b.getUTCFullYear() - 1980) << 9) | ((b.getUTCMonth() + 1) << 5) | b.getUTCDate(),
  };
}

interface Written {
  name: Buffer;
  offset: number;
  crc: number;
  compressed: number;
  size: number;
}

/** The bytes of a zip of `entries`, chunk by chunk. */
export async function* zipChunks(entries: Iterable<ZipEntry>, at = new Date()): AsyncGenerator<Buffer> {
  const { time, date } = dosTime(at);
  const written: Written[] = [];
  let offset = 0;
  for (const entry of entries) {
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(VERSION, 4);
    local.writeUInt16LE(FLAGS, 6);
    local.writeUInt16LE(DEFLATE, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    // CRC and sizes (14…25) stay 0: the data descriptor has them.
    local.writeUInt16LE(entry.name.length, 26);
    local.writeUInt16LE(0, 28);
    const record: Written = { name: entry.name, offset, crc: 0, compressed: 0, size: 0 };
    yield local;
    yield entry.name;
    offset += local.length + entry.name.length;
    const counted = async function* () {
      for await (const chunk of entry.content) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
        record.crc = crc32(bytes, record.crc);
        record.size += bytes.length;
        yield bytes;
      }
    };
    const deflated = pipeline(Readable.from(counted()), createDeflateRaw(), () => {});
    for await (const chunk of deflated as AsyncIterable<Buffer>) {
      record.compressed += chunk.length;
      yield chunk;
    }
    offset += record.compressed;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(record.crc >>> 0, 4);
    descriptor.writeUInt32LE(record.compressed, 8);
    descriptor.writeUInt32LE(record.size, 12);
    yield descriptor;
    offset += descriptor.length;
    written.push(record);
  }
  const directoryOffset = offset;
  let directorySize = 0;
  for (const record of written) {
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(VERSION, 4);
    central.writeUInt16LE(VERSION, 6);
    central.writeUInt16LE(FLAGS, 8);
    central.writeUInt16LE(DEFLATE, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(record.crc >>> 0, 16);
    central.writeUInt32LE(record.compressed, 20);
    central.writeUInt32LE(record.size, 24);
    central.writeUInt16LE(record.name.length, 28);
    // Extra field, comment, disk, internal and external attributes (30…41) stay 0.
    central.writeUInt32LE(record.offset, 42);
    yield central;
    yield record.name;
    directorySize += central.length + record.name.length;
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(written.length, 8);
  end.writeUInt16LE(written.length, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(directoryOffset, 16);
  yield end;
}

/** A whole zip in memory (the offline gateway's statements are small). */
export async function zipBuffer(entries: Iterable<ZipEntry>, at?: Date): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of zipChunks(entries, at)) chunks.push(chunk);
  return Buffer.concat(chunks);
}
