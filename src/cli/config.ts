/*
 * What every command needs and nothing more: its configuration and one way to fail. Kept free of
 * the logger, the database and the rest, so that `durapay --help` and `durapay sign` start fast.
 */
import { loadConfig, type Config } from '../config';
import { ConfigError } from '../platform/config';

/** The configuration from the environment; an invalid one ends the command with its reason (exit status 2). */
export function loadCliConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`durapay: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/** Ends the command with its reason on one line of stderr, exit status 1. */
export function fail(err: unknown): never {
  console.error(`durapay: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
