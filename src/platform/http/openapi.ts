import type Joi from 'joi';
import type { ErrorCode } from '../errors';

/**
 * How a module describes one of its signed endpoints for the OpenAPI document: each module
 * keeps the list beside its routes (its `openapi.ts`), and the API assembles them with the
 * shared parts (envelope, error answers, security schemes) into the document.
 */

/** The scope an app needs to call the operation (SPEC §2). */
export type OperationScope = 'payments' | 'merchants';

/** The statuses an operation lists its own error codes under; authentication's are added. */
export type OperationErrorStatus = 400 | 404 | 422 | 500 | 502;

export interface OperationPathParameter {
  name: string;
  description: string;
  example: string;
}

/**
 * Who may call an operation of the console's API (SPEC §12): an operator of at least this role,
 * with a session; `anyone` for signing in.
 */
export type ConsoleAccess = 'anyone' | 'viewer' | 'operator' | 'admin';

/** The statuses a console operation lists its own error codes under; the session's are added. */
export type ConsoleErrorStatus = OperationErrorStatus | 401 | 403 | 429;

/**
 * How the console module describes one of its endpoints for the console's OpenAPI document
 * (served at /console/openapi.json, the operator console's client types generated from it).
 */
export interface ConsoleOperation extends Omit<ApiOperation, 'scope' | 'multipart' | 'errors'> {
  access: ConsoleAccess;
  errors: Partial<Record<ConsoleErrorStatus, ErrorCode[]>>;
}

export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  scope: OperationScope;
  pathParameters?: OperationPathParameter[];
  query?: Joi.ObjectSchema;
  /** A JSON body, named under components.schemas. */
  body?: { name: string; schema: Joi.Schema; required: boolean };
  /** A multipart body, as JSON Schema. */
  multipart?: Record<string, unknown>;
  /** The success data, by name under components.schemas; null for `data: null`. */
  data: string | null;
  /** A success answered not in the envelope but as a file of this media type (an image). */
  file?: { mediaType: string; description: string };
  /** The error codes this operation answers with, by status (authentication's are added). */
  errors: Partial<Record<OperationErrorStatus, ErrorCode[]>>;
}
