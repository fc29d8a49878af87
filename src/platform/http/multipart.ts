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
  /** The text parts accepted, each at most once; any other part is refused. */
  textFields: readonly string[];
  maxFileBytes: number;
  /**
   * The whole body, every byte counted (the file, the text parts, each part's headers and
   * boundaries, and anything before the first part or after the last); at least maxFileBytes
   * and MAX_FIELDS_BYTES together.
   */
  maxBodyBytes: number;
  /** Stop draining a refused body past this many bytes and close the connection instead. */
  maxDrainBytes: number;
  /** The message for a file above maxFileBytes. */
  tooLargeMessage: string;
  /** The message for a body above maxBodyBytes. */
  bodyTooLargeMessage: string;
}

/** The text parts' values, all together. */
export const MAX_FIELDS_BYTES = 64 * 1024;

/** Temp files are named `durapay-upload-<pid>-<uuid>`: an operator can tell whose a stray one is. */
export const UPLOAD_TEMP_PREFIX = `durapay-upload-${process.pid}-`;

function invalid(message: string): AppError {
  return new AppError('invalid_param', message);
}

function isMultipartFormData(req: Request): boolean {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  return type.startsWith('multipart/form-data') && /;\s*boundary=/.test(type);
}

/** The length the client announced (Content-Length), when it announced one. */
function announcedLength(req: Request): number | undefined {
  const value = req.headers['content-length'];
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/**
 * Hashes and counts every byte of the body on its way to the parser, and says once when the
 * count passes `limit`, before the chunk that passed it reaches the parser.
 */
class BodyDigest extends Transform {
  readonly hash = createHash('sha256');
  received = 0;
  headers: IncomingMessage['headers'] = {};
  onOverLimit: () => void = () => undefined;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    const before = this.received;
    this.received += chunk.length;
    if (before <= this.limit && this.received > this.limit) this.onOverLimit();
    done(null, chunk);
  }
}

/** formidable's own way to fail a parse: it stops writing files and rejects `parse`. */
interface FailableForm {
  _error(err: unknown): void;
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

/**
 * After a refused body's answer has gone, reads and throws away what is left of it, up to
 * `maxBytes` of the body in all, then closes the connection. A client that stops sending at the
 * answer (as HTTP/1.1 asks of one answered early) reads it and keeps its connection; one that
 * goes on sending is cut off at the bound. Closing at once instead would reset the connection
 * under an answer the client has not read yet.
 */
function discardRest(req: Request, body: BodyDigest, maxBytes: number): void {
  const cutOff = () => {
    if (body.received > maxBytes) {
      body.off('data', cutOff);
      req.socket.destroy();
    }
  };
  cutOff();
  body.on('data', cutOff);
  body.resume();
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
 * it (401 otherwise). The caller must `discard()` the result.
 *
 * Every byte counts toward `maxBodyBytes`, whichever part (or no part) carries it, and the upload
 * is refused at the first thing that cannot be accepted: a part's headers naming a part that is
 * not expected, a file or a body past its limit. A body announced larger than `maxDrainBytes` is
 * refused before it is read. A refused body announced at most `maxDrainBytes` long is read to
 * its end before the answer, so that a body that is not the one signed is 401 whatever else is
 * wrong with it; any other is answered at once, and what follows is thrown away (up to
 * `maxDrainBytes` of the body in all) before the connection is closed.
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
  const announced = announcedLength(req);
  const body = new BodyDigest(limits.maxBodyBytes);
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

  /** Answers a refused upload (see above): 401 when the body read whole is not the one signed, else `err`. */
  const refuse = async (err: unknown): Promise<never> => {
    if (announced !== undefined && announced <= limits.maxDrainBytes) {
      const whole = await drain(body, limits.maxDrainBytes);
      await removeWritten();
      if (!whole) res.setHeader('Connection', 'close');
      if (whole && expected && !digestMatches(expected, body)) {
        throw new AppError('unauthorized', 'Content-Digest does not match the body');
      }
    } else {
      body.pause();
      await removeWritten();
      res.once('finish', () => discardRest(req, body, limits.maxDrainBytes));
    }
    throw refusal(err, limits) ?? err;
  };

  if (announced !== undefined && announced > limits.maxDrainBytes) {
    return refuse(invalid(limits.bodyTooLargeMessage));
  }

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
    // Parts reach the parser only past onPart below, which lets through the file part alone.
    filter: (part) => part.name === limits.fileField,
  });
  // Once refused, no later part is handled: a file part after a refused one would otherwise be
  // written to a temp file after the refusal had removed those written so far.
  let refused = false;
  const fail = (err: AppError) => {
    refused = true;
    (form as unknown as FailableForm)._error(err);
  };
  body.onOverLimit = () => fail(invalid(limits.bodyTooLargeMessage));

  // Text parts as they come, by name: formidable's own `fields` object would take a part named
  // `__proto__` as its prototype and lose it.
  const fields = new Map<string, string>();
  form.on('field', (name: string, value: string) => {
    if (value.includes('\u0000')) fail(invalid(`form part "${name}" must not contain U+0000`));
    else fields.set(name, value);
  });
  // Each part is judged by its headers, before a byte of its content is read: one that cannot be
  // accepted ends the parse there, whatever its size.
  const announcedParts = new Set<string>();
  form.onPart = (part) => {
    if (refused) return;
    const name = part.name ?? '';
    const isFile = part.originalFilename !== null;
    let problem: AppError | undefined;
    if (name === limits.fileField) {
      if (!isFile) problem = invalid(`${limits.fileField} must be a file part (with a filename)`);
      else if (announcedParts.has(name)) problem = invalid(`only one ${limits.fileField} part is allowed`);
    } else if (!limits.textFields.includes(name)) {
      problem = invalid(`unexpected form part "${name}"`);
    } else if (isFile) {
      problem = invalid(`form part "${name}" must be a text part (without a filename)`);
    } else if (announcedParts.has(name)) {
      problem = invalid(`form part "${name}" is given more than once`);
    }
    if (problem) return fail(problem);
    announcedParts.add(name);
    // A text part is text whatever Content-Type it names; a part with a file name is a file even
    // when it carries no Content-Type of its own (formidable tells them apart by the type).
    if (!isFile) part.mimetype = null;
    else if (!part.mimetype) part.mimetype = 'application/octet-stream';
    return form._handlePart(part);
  };

  const parsed = await form.parse(body as unknown as IncomingMessage).then(
    ([, files]) => ({ ok: true as const, files }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  if (!parsed.ok) return refuse(parsed.err);
  const { files } = parsed;

  // The parser is done at the closing boundary; what follows it counts toward the body too.
  if (!(await drain(body, limits.maxBodyBytes))) {
    const tooLarge = body.received > limits.maxBodyBytes;
    return refuse(invalid(tooLarge ? limits.bodyTooLargeMessage : 'request body was not received whole'));
  }
  if (expected && !digestMatches(expected, body)) {
    await removeWritten();
    throw new AppError('unauthorized', 'Content-Digest does not match the body');
  }
  const file = (files[limits.fileField] ?? [])[0];
  return {
    fields,
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
}
