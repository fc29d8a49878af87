import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import { once } from 'node:events';
import { Transform, pipeline, type TransformCallback } from 'node:stream';
import type { Request, Response } from 'express';
import { errors as formidableErrors, formidable, multipart } from 'formidable';
import { AppError } from '../errors';

/** A file part as received: on disk (a temp file the caller must discard), never in memory. */
export interface ReceivedFile {
  filepath: string;
  /** As the client sent it (formidable keeps what follows the last backslash). */
  originalFilename: string | null;
  size: number;
  /** SHA-256 of the file's content, lower-case hex, computed while it streamed to disk. */
  sha256: string;
}

export interface ReceivedForm {
  /** Text parts by name (each name at most once). */
  fields: Map<string, string>;
  /** The file part named `fileField`, if one came. */
  file: ReceivedFile | null;
  /** Deletes the temp file; safe to call more than once. */
  discard(): Promise<void>;
}

export interface MultipartLimits {
  /** The one file part's name. */
  fileField: string;
  /** The text parts accepted; any other part is refused. */
  textFields: readonly string[];
  maxFileBytes: number;
  /** Stop draining a refused body past this many bytes and close the connection instead. */
  maxDrainBytes: number;
  /** The message for a file above maxFileBytes. */
  tooLargeMessage: string;
}

const MAX_FIELDS_BYTES = 64 * 1024;

/** Temp files are named `durapay-upload-<pid>-<uuid>`: an operator can tell whose a stray one is. */
export const UPLOAD_TEMP_PREFIX = `durapay-upload-${process.pid}-`;

function invalid(message: string): AppError {
  return new AppError('invalid_param', message);
}

function isMultipartFormData(req: Request): boolean {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  return type.startsWith('multipart/form-data') && /;\s*boundary=/.test(type);
}

/** Hashes and counts every byte of the body on its way to the parser. */
class BodyDigest extends Transform {
  readonly hash = createHash('sha256');
  received = 0;
  headers: IncomingMessage['headers'] = {};

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.received += chunk.length;
    done(null, chunk);
  }
}

/** Reads the rest of a body the parser gave up on, so the client is answered cleanly. */
function drain(body: BodyDigest, maxBytes: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (body.readableEnded || body.destroyed) return resolve(body.readableEnded);
    const settle = (whole: boolean) => {
      body.off('end', onEnd).off('error', onGone).off('close', onGone).off('data', onData);
      resolve(whole);
    };
    const onEnd = () => settle(true);
    const onGone = () => settle(body.readableEnded);
    const onData = () => {
      if (body.received > maxBytes) {
        body.pause();
        settle(false);
      }
    };
    body.on('end', onEnd).on('error', onGone).on('close', onGone).on('data', onData);
    body.resume();
  });
}

function formidableCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, httpCode } = err as { code?: unknown; httpCode?: unknown };
  return typeof code === 'number' && typeof httpCode === 'number' ? code : undefined;
}

/** What the client gets for a body the parser refused; undefined for our own failures (500). */
function refusal(err: unknown, limits: MultipartLimits): AppError | undefined {
  if (err instanceof AppError) return err;
  switch (formidableCode(err)) {
    case formidableErrors.biggerThanMaxFileSize:
    case formidableErrors.biggerThanTotalMaxFileSize:
      return invalid(limits.tooLargeMessage);
    case formidableErrors.noEmptyFiles:
    case formidableErrors.smallerThanMinFileSize:
      return invalid(`${limits.fileField} is empty`);
    case formidableErrors.maxFilesExceeded:
      return invalid(`only one ${limits.fileField} part is allowed`);
    case formidableErrors.maxFieldsExceeded:
    case formidableErrors.maxFieldsSizeExceeded:
      return invalid('the form has too many or too large text parts');
    case formidableErrors.aborted:
      return invalid('request body was not received whole');
    case formidableErrors.malformedMultipart:
    case formidableErrors.missingMultipartBoundary:
    case formidableErrors.missingContentType:
    case formidableErrors.noParser:
    case formidableErrors.unknownTransferEncoding:
    case formidableErrors.filenameNotString:
      return invalid('request body is not well-formed multipart/form-data');
    default:
      // A client that went away mid-body: nobody reads the answer, but it is not our failure.
      if ((err as { code?: unknown })?.code === 'ECONNRESET') {
        return invalid('request body was not received whole');
      }
      return undefined;
  }
}

function digestMatches(expected: Buffer, body: BodyDigest): boolean {
  const actual = body.hash.digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * Streams a multipart/form-data upload (SPEC §5.5): text parts into memory (64 KiB in all), the
 * one file part to a temp file, hashing the whole body on the way. When `authenticate` left the
 * announced Content-Digest in `res.locals.expectedSha256`, the body actually received must match
 * it (401 otherwise). A refused body is still read to its end (up to maxDrainBytes) so that the
 * client gets its 400 rather than a reset connection. The caller must `discard()` the result.
 */
export async function receiveMultipart(
  req: Request,
  res: Response,
  limits: MultipartLimits,
): Promise<ReceivedForm> {
  if (!isMultipartFormData(req)) {
    throw invalid('request must be multipart/form-data with a boundary');
  }
  const expected = res.locals.expectedSha256 as Buffer | undefined;
  const body = new BodyDigest();
  body.headers = req.headers;
  // On a client abort, pipeline destroys `body` with the error, which fails the parse.
  pipeline(req, body, () => undefined);

  // Temp files are written by streams of our own, so that every one of them, however the parse
  // ends, is closed and deleted (formidable alone leaves a file begun after its first error).
  const written: WriteStream[] = [];
  const removeWritten = () =>
    Promise.all(
      written.map(async (stream) => {
        if (!stream.closed) {
          const closed = once(stream, 'close');
          stream.destroy();
          await closed.catch(() => undefined);
        }
        await fs.rm(String(stream.path), { force: true });
      }),
    );

  const unexpected: string[] = [];
  const form = formidable({
    enabledPlugins: [multipart],
    uploadDir: os.tmpdir(),
    filename: () => `${UPLOAD_TEMP_PREFIX}${randomUUID()}`,
    fileWriteStreamHandler: (file) => {
      const filepath = (file as { filepath?: unknown } | undefined)?.filepath;
      if (typeof filepath !== 'string') throw new Error('formidable gave a file without a path');
      const stream = createWriteStream(filepath, { flags: 'wx', mode: 0o600 });
      written.push(stream);
      return stream;
    },
    maxFiles: 1,
    maxFileSize: limits.maxFileBytes,
    maxTotalFileSize: limits.maxFileBytes,
    maxFields: 16,
    maxFieldsSize: MAX_FIELDS_BYTES,
    allowEmptyFiles: false,
    minFileSize: 1,
    hashAlgorithm: 'sha256',
    filter: (part) => {
      if (part.name === limits.fileField) return true;
      unexpected.push(part.name ?? '');
      return false;
    },
  });
  // Text parts as they come, by name: formidable's own `fields` object would take a part named
  // `__proto__` as its prototype and lose it.
  const textParts: [string, string][] = [];
  form.on('field', (name: string, value: string) => textParts.push([name, value]));
  // A part with a file name is a file even when it carries no Content-Type of its own.
  form.onPart = (part) => {
    if (part.originalFilename !== null && !part.mimetype) part.mimetype = 'application/octet-stream';
    return form._handlePart(part);
  };

  const parsed = await form.parse(body as unknown as IncomingMessage).then(
    ([, files]) => ({ ok: true as const, files }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  if (!parsed.ok) {
    const whole = await drain(body, limits.maxDrainBytes);
    await removeWritten();
    if (!whole) res.setHeader('Connection', 'close');
    if (whole && expected && !digestMatches(expected, body)) {
      throw new AppError('unauthorized', 'Content-Digest does not match the body');
    }
    const known = refusal(parsed.err, limits);
    if (known) throw known;
    throw parsed.err;
  }
  const { files } = parsed;

  const file = (files[limits.fileField] ?? [])[0];
  const result: ReceivedForm = {
    fields: new Map(),
    file: file
      ? {
          filepath: file.filepath,
          originalFilename: file.originalFilename,
          size: file.size,
          sha256: typeof file.hash === 'string' ? file.hash : '',
        }
      : null,
    async discard() {
      await removeWritten();
    },
  };
  try {
    // The parser is done at the closing boundary; the digest covers whatever follows it too.
    const whole = await drain(body, limits.maxDrainBytes);
    if (!whole) res.setHeader('Connection', 'close');
    if (expected && !(body.readableEnded && digestMatches(expected, body))) {
      throw new AppError('unauthorized', 'Content-Digest does not match the body');
    }
    if (unexpected.length > 0) throw invalid(`unexpected form part "${unexpected[0]}"`);
    for (const [name, value] of textParts) {
      if (name === limits.fileField)
        throw invalid(`${limits.fileField} must be a file part (with a filename)`);
      if (!limits.textFields.includes(name)) throw invalid(`unexpected form part "${name}"`);
      if (result.fields.has(name)) throw invalid(`form part "${name}" is given more than once`);
      if (value.includes('\u0000')) throw invalid(`form part "${name}" must not contain U+0000`);
      result.fields.set(name, value);
    }
    return result;
  } catch (err) {
    await result.discard();
    throw err;
  }
}
