import { FieldSealer, MissingKeyError } from '../../src/platform/crypto/field-sealer';
import { Keyring } from '../../src/platform/crypto/keyring';
import {
  SEALED_FIELD_PREFIX,
  SealedColumn,
  legacyJson,
  legacyText,
  sealedPrefix,
} from '../../src/platform/crypto/sealed-column';

const key = (byte: number) => Buffer.alloc(32, byte);
const old = new Keyring([{ id: 'k1', key: key(1) }]);
const rotated = new Keyring([
  { id: 'k2', key: key(2) },
  { id: 'k1', key: key(1) },
]);

const submitData = (keyring: Keyring | undefined) =>
  new SealedColumn<Record<string, unknown>>(keyring, 'merchant_applications.submit_data', legacyJson);
const bankAccount = (keyring: Keyring | undefined) =>
  new SealedColumn<string>(keyring, 'merchants.bank_account', legacyText);

const APPLICANT = { id_card_number: '11010519491231002X', id_card_name: '张三' };

describe('a sealed column', () => {
  test('when a value is sealed for a row, then it opens there, and neither in another row nor in another column', () => {
    const column = submitData(old);
    const sealed = column.seal(APPLICANT, 'apl_a')!;
    expect(sealed).not.toContain('11010519491231002X');
    expect(column.open(sealed, 'apl_a')).toEqual(APPLICANT);
    expect(() => column.open(sealed, 'apl_b')).toThrow(
      'merchant_applications.submit_data of apl_b does not open: it was sealed for another row or column, or altered',
    );
    const answer = new SealedColumn(old, 'merchant_applications.channel_last_answer', legacyJson);
    expect(() => answer.open(sealed, 'apl_a')).toThrow();
  });

  test('when a merchant value is copied to the same merchant id of another app, then it does not open', () => {
    const column = bankAccount(old);
    const sealed = column.seal('6222020200112233', 'app_a:m-1')!;
    expect(column.open(sealed, 'app_a:m-1')).toBe('6222020200112233');
    expect(() => column.open(sealed, 'app_b:m-1')).toThrow();
  });

  test('when the value is null, then it is stored as null and read as null, keys or not', () => {
    expect(bankAccount(old).seal(null, 'a:m')).toBeNull();
    expect(bankAccount(undefined).seal(null, 'a:m')).toBeNull();
    expect(bankAccount(undefined).open(null, 'a:m')).toBeNull();
  });

  test('when a row holds legacy plain text, then it reads as the code before sealing read it', () => {
    expect(submitData(old).open('{"shop": "tea", "n": 1}', 'apl_a')).toEqual({ shop: 'tea', n: 1 });
    expect(bankAccount(old).open('6222020200112233', 'a:m')).toBe('6222020200112233');
    // Without keys too: only a sealed value needs them.
    expect(bankAccount(undefined).open('Li Lei', 'a:m')).toBe('Li Lei');
  });

  test('when legacy JSON does not parse, then the error names the column and row and never the text', () => {
    let message = '';
    try {
      submitData(old).open('{"id_card_number": "11010519491231002X"', 'apl_a');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(
      'merchant_applications.submit_data of apl_a holds a value that is neither sealed nor JSON',
    );
  });

  test('when a value was sealed with a key no longer listed, then opening names the key', () => {
    const sealed = bankAccount(old).seal('6222', 'a:m')!;
    const other = new Keyring([{ id: 'k3', key: key(3) }]);
    expect(() => bankAccount(other).open(sealed, 'a:m')).toThrow(MissingKeyError);
  });

  test('when a column has no keys, then sealing or opening a sealed value says so', () => {
    const sealed = bankAccount(old).seal('6222', 'a:m')!;
    expect(() => bankAccount(undefined).open(sealed, 'a:m')).toThrow(
      'merchants.bank_account is sealed, and this repository was given no payload keys',
    );
    expect(() => bankAccount(undefined).seal('6222', 'a:m')).toThrow(/given no payload keys/);
  });

  test('when a stored value is resealed, then legacy text is sealed and a sealed one left alone', () => {
    const column = submitData(old);
    const sealed = column.reseal('{"shop": "tea"}', 'apl_a', false);
    expect(FieldSealer.keyIdOf(sealed!)).toBe('k1');
    expect(column.open(sealed!, 'apl_a')).toEqual({ shop: 'tea' });
    expect(column.reseal(sealed!, 'apl_a', false)).toBeUndefined();
    expect(column.reseal(sealed!, 'apl_a', true)).toBeUndefined();
    expect(column.reseal(null, 'apl_a', true)).toBeUndefined();
  });

  test('when keys rotate, then only with rotate is an older key’s value sealed again with the current key', () => {
    const before = submitData(old).seal(APPLICANT, 'apl_a')!;
    const column = submitData(rotated);
    expect(column.reseal(before, 'apl_a', false)).toBeUndefined();
    const after = column.reseal(before, 'apl_a', true)!;
    expect(FieldSealer.keyIdOf(after)).toBe('k2');
    expect(column.open(after, 'apl_a')).toEqual(APPLICANT);
    expect(column.reseal(after, 'apl_a', true)).toBeUndefined();
  });

  test('when the prefix a query looks for is built, then it is what FieldSealer writes', () => {
    const sealed = new FieldSealer(rotated).seal('x', 'c');
    expect(FieldSealer.isSealed(`${SEALED_FIELD_PREFIX}k1:AAAA`)).toBe(true);
    expect(sealed.startsWith(sealedPrefix(rotated, false))).toBe(true);
    expect(sealed.startsWith(sealedPrefix(rotated, true))).toBe(true);
    expect(sealedPrefix(rotated, true)).toBe('dpf1:k2:');
    expect(new FieldSealer(old).seal('x', 'c').startsWith(sealedPrefix(rotated, true))).toBe(false);
  });
});
