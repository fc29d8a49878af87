import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Loaded by path (DataConverter.failureConverterPath) in the worker, its workflow bundle and every
 * client: a failure's message and stack trace travel as a payload, which the payload codec seals,
 * instead of as plain text in the history.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
