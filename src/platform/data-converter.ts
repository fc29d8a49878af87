import type { DataConverter } from '@temporalio/common';
import type { Keyring } from './crypto/keyring';
import { EncryptionCodec } from './payload-codec';

/** The failure converter's module, for bundleWorkflowCode and every DataConverter. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * What every Temporal client and worker of durapay encodes with (SPEC §7): payloads sealed by
 * the payload codec, and failures' messages and stack traces moved into a sealed payload too, so
 * that a history holds no order subject, URL, buyer identifier or applicant data in the clear.
 * Search attributes are not payloads: they stay readable for the UI's queries.
 */
export function sealedDataConverter(keyring: Keyring): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keyring)], failureConverterPath: FAILURE_CONVERTER_PATH };
}
