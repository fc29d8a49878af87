import winston from 'winston';

export type Logger = winston.Logger;

/** Keys whose values are never written to a log line, whatever object they sit in. */
const SECRET_KEYS =
  /^(secret|.*_secret|password|authorization|signature|signature-input|master_key|.*token|private_?key|.*private_?key|api_?v3_?key)$/i;

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    info[key] = SECRET_KEYS.test(key) ? '[redacted]' : redact(info[key]);
  }
  return info;
});

export interface LoggerOptions {
  level?: string;
  /** Extra fields on every line (service name, process role). */
  defaultMeta?: Record<string, unknown>;
  /** Where lines go; stdout by default. Tests pass a stream to capture them. */
  stream?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: options.defaultMeta,
    format: winston.format.combine(
      redactFormat(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [
      options.stream
        ? new winston.transports.Stream({ stream: options.stream })
        : new winston.transports.Console({ stderrLevels: [] }),
    ],
  });
}
