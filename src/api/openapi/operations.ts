import type Joi from 'joi';
import parse from 'joi-to-json';
import type { ApiOperation, ConsoleOperation } from '../../platform/http/openapi';
import { schemaRef, successEnvelope, type DocumentedErrorCode } from './response-schemas';
import { errorResponse, jsonResponse } from './responses';

// One operation of a document as OpenAPI writes it, for the app API's document and the console's
// alike: its parameters and body generated from the joi schemas the route validates with, its
// answers from the data schema it names and the error codes it lists under each status.

type Schema = Record<string, unknown>;

/** What a document adds to each of its operations. */
export interface OperationStyle {
  /** The errors every operation of the document may answer besides its own (authentication's). */
  authErrors: Partial<Record<number, DocumentedErrorCode[]>>;
  /** Each status's words in the document. */
  statusDescriptions: Record<number, string>;
  security: Schema[];
  /** A line after the operation's description (its scope, its role). */
  note: string;
}

/** Each query parameter of a joi object, with its generated schema. */
function queryParameters(query: Joi.ObjectSchema): Schema[] {
  const generated = parse(query, 'open-api-3.1') as {
    properties: Record<string, Schema>;
    required?: string[];
  };
  return Object.entries(generated.properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: 'query',
      required: generated.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

/** The operation object; its request body's schema is added to `requestBodies` by its name. */
export function describeOperation(
  op: ApiOperation | ConsoleOperation,
  requestBodies: Record<string, Schema>,
  style: OperationStyle,
): Schema {
  const responses: Record<string, Schema> = {
    200:
      'file' in op && op.file
        ? {
            description: op.file.description,
            content: {
              [op.file.mediaType]: { schema: { type: 'string', contentMediaType: op.file.mediaType } },
            },
          }
        : jsonResponse(style.statusDescriptions[200]!, successEnvelope(op.data ? schemaRef(op.data) : null)),
  };
  const errors: Partial<Record<number, DocumentedErrorCode[]>> = { ...op.errors };
  for (const [status, codes] of Object.entries(style.authErrors)) {
    errors[Number(status)] = [...new Set([...(errors[Number(status)] ?? []), ...(codes ?? [])])];
  }
  errors[500] = [...new Set<DocumentedErrorCode>(['internal_system', ...(errors[500] ?? [])])];
  for (const status of Object.keys(errors).map(Number).sort()) {
    responses[status] = errorResponse(status, errors[status]!, style.statusDescriptions);
  }
  const parameters = [
    ...(op.pathParameters ?? []).map((p) => ({
      name: p.name,
      in: 'path',
      required: true,
      description: p.description,
      schema: { type: 'string' },
      example: p.example,
    })),
    ...(op.query ? queryParameters(op.query) : []),
  ];
  let requestBody: Schema | undefined;
  if (op.body) {
    requestBodies[op.body.name] = parse(op.body.schema, 'open-api-3.1') as Schema;
    requestBody = {
      required: op.body.required,
      content: { 'application/json': { schema: schemaRef(op.body.name) } },
    };
  } else if ('multipart' in op && op.multipart) {
    requestBody = { required: true, content: { 'multipart/form-data': { schema: op.multipart } } };
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: `${op.description}\n\n${style.note}`,
    security: style.security,
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}
