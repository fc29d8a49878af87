/**
 * Every integration and end-to-end test file: each answer received with `fetch` from an API the
 * harness registered is checked against the OpenAPI document (./openapi-conformance.ts), and a
 * test fails when one of its answers does not conform.
 */
import { responseConformance } from './openapi-conformance';

const realFetch = globalThis.fetch;
const pending: Promise<string[]>[] = [];

function requestOf(input: Parameters<typeof fetch>[0], init?: RequestInit): { method: string; url: string } {
  if (input instanceof Request) return { method: init?.method ?? input.method, url: input.url };
  return { method: init?.method ?? 'GET', url: String(input) };
}

globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  const request = requestOf(input, init);
  const url = new URL(res.url || request.url);
  const conformance = responseConformance();
  if (conformance.covers(url)) {
    const copy = res.clone();
    pending.push(
      copy.text().then(
        (body) => conformance.check(request.method.toUpperCase(), url, res.status, res.headers, body),
        // The caller cancelled the body, or the connection died: nothing was received to check.
        () => [],
      ),
    );
  }
  return res;
};

async function problems(): Promise<string[]> {
  return (await Promise.all(pending.splice(0))).flat();
}

afterEach(async () => {
  expect(await problems()).toEqual([]);
});

// Answers received in beforeAll/afterAll hooks.
afterAll(async () => {
  expect(await problems()).toEqual([]);
});
