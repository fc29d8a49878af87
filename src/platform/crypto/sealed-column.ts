import { FieldSealer, MissingKeyError, SEALED_FIELD_PREFIX } from './field-sealer';
import type { Keyring } from './keyring';

export { SEALED_FIELD_PREFIX };

/**
 * What a stored value that needs no (re-)sealing starts with, for a query that looks for the
 * others: any sealed value, or with `rotate`, one sealed with the current key.
 */
export function sealedPrefix(keyring: Keyring, rotate: boolean): string {
  return rotate ? `${SEALED_FIELD_PREFIX}${keyring.current.id}:` : SEALED_FIELD_PREFIX;
}

/**
 * One text column of personal data kept sealed by FieldSealer, each value bound to its table,
 * column and row (`<table>.<column>:<row key>`), so that a value copied into another row or
 * column does not open. Rows written before the column was sealed still hold their plain text
 * (legacy): `legacy` reads it as the code of that time did, and `reseal` seals it.
 */
export class SealedColumn<T> {
  private readonly sealer: FieldSealer | undefined;

  constructor(
    private readonly keyring: Keyring | undefined,
    /** `table.column`, e.g. `merchants.bank_account`. */
    readonly name: string,
    /** Reads legacy plain text; what it throws says what is wrong without quoting the text. */
    private readonly legacy: (text: string) => T,
  ) {
    this.sealer = keyring && new FieldSealer(keyring);
  }

  context(rowKey: string): string {
    return `${this.name}:${rowKey}`;
  }

  private get keys(): { sealer: FieldSealer; keyring: Keyring } {
    if (!this.sealer || !this.keyring)
      throw new Error(`${this.name} is sealed, and this repository was given no payload keys`);
    return { sealer: this.sealer, keyring: this.keyring };
  }

  /** The value as the column stores it; null stays null (SQL NULL, nothing to hide). */
  seal(value: T | null, rowKey: string): string | null {
    return value === null ? null : this.keys.sealer.seal(value, this.context(rowKey));
  }

  /** The value a stored text holds, whether sealed or legacy plain text. */
  open(stored: string | null, rowKey: string): T | null {
    if (stored === null) return null;
    if (!FieldSealer.isSealed(stored)) {
      try {
        return this.legacy(stored);
      } catch (err) {
        throw new Error(`${this.name} of ${rowKey} ${(err as Error).message}`);
      }
    }
    try {
      return this.keys.sealer.open<T>(stored, this.context(rowKey));
    } catch (err) {
      if (err instanceof MissingKeyError || !this.sealer) throw err;
      // Names the row for an operator, never the value.
      throw new Error(
        `${this.name} of ${rowKey} does not open: it was sealed for another row or column, or altered`,
      );
    }
  }

  /**
   * What the column should hold instead of `stored`: legacy plain text sealed, and with
   * `rotate` a value sealed by an older key sealed again with the current one; undefined when
   * `stored` is already as it should be.
   */
  reseal(stored: string | null, rowKey: string, rotate: boolean): string | null | undefined {
    if (stored === null || stored.startsWith(sealedPrefix(this.keys.keyring, rotate))) return undefined;
    return this.seal(this.open(stored, rowKey), rowKey);
  }
}

/**
 * Reads a legacy JSON column's text (what `jsonb::text` gave). A parse error never carries the
 * text it failed on into a message or log: it may be personal data.
 */
export function legacyJson<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error('holds a value that is neither sealed nor JSON');
  }
}

/** Reads a legacy text column: its plain text is the value. */
export const legacyText = (text: string): string => text;
