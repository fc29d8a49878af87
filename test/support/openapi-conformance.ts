/**
 * Holds every answer the integration suites receive from a durapay API to the OpenAPI document
 * the API serves (the app API's `/openapi.json`, and for `/console/api/*` the operator console's
 * `/console/openapi.json`): the operation must exist, the status must be one it documents, the content type
 * and the body must match the documented schema (error codes included, per operation and
 * status), and the `X-Request-Id` header must be there. Installed for every integration and
 * end-to-end test file by ./conformance-setup.ts, which wraps `fetch`; a test fails when an
 * answer it received does not conform.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildConsoleDocument } from '../../src/api/openapi/console-document';
import { buildOpenApiDocument } from '../../src/api/openapi/document';

type Json = Record<string, unknown>;

interface ApiOrigin {
  origin: string;
  /** Simulated upstreams mounted on the same server (`/sandbox`, …): not durapay's API. */
  ignoredPrefixes: string[];
}

interface Route {
  template: string;
  pattern: RegExp;
  /** Literal segments first: `/api/v1/merchant/upload-file` before `/api/v1/merchant/{merchantID}`. */
  parameters: number;
}

/** One of the API's documents, and the paths it describes. */
interface Described {
  id: string;
  document: Json;
  routes: Route[];
  /** Whether the document describes this path (the console's: its JSON API only). */
  describes: (pathname: string) => boolean;
}

const CONSOLE_API = '/console/api';
const isConsoleApi = (pathname: string) => pathname === CONSOLE_API || pathname.startsWith(`${CONSOLE_API}/`);
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** `/a/{x}/b` as a pattern; a trailing parameter may be empty or left out (SPEC: 400 missing_param). */
function routeOf(template: string): Route {
  const segments = template.split('/').slice(1);
  let source = '';
  segments.forEach((segment, i) => {
    const isParam = /^\{[^}]+\}$/.test(segment);
    if (!isParam) source += `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
    else if (i === segments.length - 1) source += '(?:/[^/]*)?';
    else source += '/[^/]+';
  });
  return {
    template,
    pattern: new RegExp(`^${source}/?$`),
    parameters: (template.match(/\{/g) ?? []).length,
  };
}

/** JSON pointer escaping (RFC 6901). */
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class ResponseConformance {
  /** The app API's document. */
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly described: Described[];
  private readonly origins = new Map<string, ApiOrigin>();

  constructor() {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    const describe = (id: string, built: Json, describes: (pathname: string) => boolean): Described => {
      const document: Json = { ...built, $id: id };
      this.ajv.addSchema(document);
      const routes = Object.keys(document.paths as Json)
        .map(routeOf)
        .sort((a, b) => a.parameters - b.parameters);
      return { id, document, routes, describes };
    };
    // The console's JSON API first: its paths are the console document's, every other the API's.
    this.described = [
      describe(
        'https://durapay.invalid/console/openapi.json',
        buildConsoleDocument({ version: '0.0.0-test' }),
        isConsoleApi,
      ),
      describe(
        'https://durapay.invalid/openapi.json',
        buildOpenApiDocument({ version: '0.0.0-test' }),
        () => true,
      ),
    ];
    this.document = this.described[1]!.document;
  }

  /**
   * Answers from this base URL are checked, except under the given mounts (the simulated
   * upstreams, and the console's pages: its JSON API is checked against its own document).
   */
  register(
    baseUrl: string,
    ignoredPrefixes = ['/sandbox', '/wechatpay', '/alipay', '/console', '/checkout'],
  ): void {
    const origin = new URL(baseUrl).origin;
    this.origins.set(origin, { origin, ignoredPrefixes });
  }

  covers(url: URL): boolean {
    const api = this.origins.get(url.origin);
    if (!api) return false;
    if (isConsoleApi(url.pathname) || url.pathname === '/console/openapi.json') return true;
    return !api.ignoredPrefixes.some((p) => url.pathname === p || url.pathname.startsWith(`${p}/`));
  }

  /** The problems with one answer; none when it conforms. */
  check(method: string, url: URL, status: number, headers: Headers, body: string): string[] {
    const where = `${method} ${url.pathname} → ${status}`;
    const problems: string[] = [];
    const requestId = headers.get('x-request-id');
    const described = this.described.find((d) => d.describes(url.pathname))!;
    const documentId = described.id;
    const paths = described.document.paths as Record<string, Json>;
    const route = described.routes.find(
      (r) => r.pattern.test(url.pathname) && paths[r.template]![method.toLowerCase()],
    );
    const operation = route && paths[route.template]![method.toLowerCase()];
    const isJson = (headers.get('content-type') ?? '').startsWith('application/json');

    if (!route || !operation) {
      // No such operation: the answer must be an error envelope (404 not_found, or the
      // authentication of a signed prefix, which is checked before routing).
      if (!requestId || !REQUEST_ID.test(requestId)) problems.push(`${where}: no valid X-Request-Id`);
      if (!isJson) return [...problems, `${where}: an unknown route answered ${headers.get('content-type')}`];
      return [...problems, ...this.validate(`${documentId}#/components/schemas/Error`, body, where)];
    }
    const responses = (operation as Json).responses as Json;
    const documented = responses[String(status)] as Json | undefined;
    if (!documented) {
      return [
        `${where}: status ${status} is not documented for ${method} ${route.template} (body ${body.slice(0, 300)})`,
      ];
    }
    if (documented.headers && (!requestId || !REQUEST_ID.test(requestId))) {
      problems.push(`${where}: no valid X-Request-Id`);
    }
    const content = documented.content as Json | undefined;
    if (!content || method === 'HEAD') return problems;
    const mediaType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!content[mediaType] && !content['*/*']) {
      return [
        ...problems,
        `${where}: content type ${mediaType} is not one of ${Object.keys(content).join(', ')}`,
      ];
    }
    if (mediaType !== 'application/json') return problems;
    const pointer = [
      'paths',
      route.template,
      method.toLowerCase(),
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    ]
      .map(escapePointer)
      .join('/');
    return [...problems, ...this.validate(`${documentId}#/${pointer}`, body, where)];
  }

  private validate(schemaRef: string, body: string, where: string): string[] {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${where}: the body is not JSON: ${body.slice(0, 200)}`];
    }
    const validate = this.ajv.getSchema(schemaRef);
    if (!validate) return [`${where}: no schema at ${schemaRef}`];
    if (validate(value)) return [];
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map(
        (e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
    return [`${where}: ${errors.join('; ')} — body ${body.slice(0, 500)}`];
  }
}

let shared: ResponseConformance | undefined;

/** One per test file (jest gives each file its own module registry). */
export function responseConformance(): ResponseConformance {
  return (shared ??= new ResponseConformance());
}
