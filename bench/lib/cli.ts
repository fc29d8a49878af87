import { InvalidArgumentError } from 'commander';

/** A commander parser for an integer option of at least `min`, naming the option when it is not. */
export function intOption(name: string, min = 1) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

/** Progress and messages for people go to stderr; stdout carries the report. */
export const say = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
