import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import {
  ForbiddenDestinationError,
  isForbiddenAddress,
  type LookupFunction,
  postWebhook,
} from '../../src/platform/http-out';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  received: Received[];
  connections: () => number;
  /** Resolves when the client closes a connection the server had not finished answering. */
  hungUp: Promise<void>;
  close: () => Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function startServer(handler: Handler): Promise<TestServer> {
  const received: Received[] = [];
  let connections = 0;
  let hangUp: () => void = () => undefined;
  const hungUp = new Promise<void>((resolve) => (hangUp = resolve));
  const server = http.createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) hangUp();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      handler(req, res);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    connections: () => connections,
    hungUp,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A resolver that answers from a table and records how it was asked, honouring `all` as dns.lookup does. */
function fakeLookup(answers: string[]): {
  lookup: LookupFunction;
  calls: { hostname: string; all: boolean }[];
} {
  const calls: { hostname: string; all: boolean }[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    calls.push({ hostname, all: options.all === true });
    const first = answers[0];
    if (first === undefined) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    } else if (options.all) {
      callback(
        null,
        answers.map((address) => ({ address, family: net.isIP(address) })),
      );
    } else {
      callback(null, first, net.isIP(first));
    }
  };
  return { lookup, calls };
}

/** Never answers, as a resolver that has gone silent. */
const silentLookup: LookupFunction = () => undefined;

const SIGNATURE = 'v1,c2lnbmF0dXJlLXRoYXQtbXVzdC1ub3QtbGVhaw==';

function baseOptions(url: string) {
  return {
    url,
    body: '{"event":"payment.succeeded","amount":1200}',
    headers: { 'content-type': 'application/json', 'webhook-signature': SIGNATURE },
    timeoutMs: 2000,
    maxBodyBytes: 65536,
    guardAddresses: false,
  };
}

describe('isForbiddenAddress', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['255.255.255.255', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fc00::1', true],
    ['fd12:3456::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.5', true],
    ['127.1', true],
    ['0x7f.0.0.1', true],
    ['not-an-ip', true],
    ['', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['::ffff:8.8.8.8', false],
    ['2606:4700:4700::1111', false],
  ])('when the address is %p, then forbidden is %p', (ip, forbidden) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
  });

  // IPv6 forms that carry an IPv4 address: judged by the host they reach, or refused outright
  // where no public webhook receiver lives. Each is written as Node and the URL parser give it.
  test.each([
    // IPv4-compatible (::a.b.c.d, deprecated): [::127.0.0.1] is ::7f00:1 once parsed; Node's
    // resolver writes it dotted.
    ['::7f00:1', true],
    ['::127.0.0.1', true],
    ['::10.0.0.5', true],
    ['::8.8.8.8', true],
    ['::a00:5', true],
    ['::c0a8:10a', true],
    ['::a9fe:a9fe', true],
    ['::808:808', true],
    // IPv4-mapped, long and short.
    ['::ffff:7f00:1', true],
    ['::ffff:a9fe:a9fe', true],
    ['0:0:0:0:0:ffff:c0a8:0101', true],
    // IPv4-translated (SIIT).
    ['::ffff:0:7f00:1', true],
    // NAT64, the well-known prefix: a translator connects to the embedded address.
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::a00:5', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::808:808', false],
    ['64:ff9b::8.8.8.8', false],
    ['64:ff9b::192.168.0.1', true],
    // NAT64, local-use prefix: where the address sits depends on the network.
    ['64:ff9b:1::a00:1', true],
    // 6to4 and Teredo tunnel to an IPv4 endpoint.
    ['2002:7f00:1::1', true],
    ['2002:a00:1::', true],
    ['2002:808:808::1', true],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', true],
  ])('when the address %p embeds an IPv4 address, then forbidden is %p', (ip, forbidden) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
  });
});

describe('ForbiddenDestinationError', () => {
  test('when built, then it names the host, the address and the kind of range', () => {
    const err = new ForbiddenDestinationError('internal.example', '10.0.0.5', 'private');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ForbiddenDestinationError');
    expect(err.message).toBe('notify_url host "internal.example" resolves to 10.0.0.5, a private address');
  });
});

describe('postWebhook', () => {
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  test('when the guard is off, then the POST arrives with the exact body and headers, and the status and the latency on its clock are returned', async () => {
    let clock = 1_000;
    server = await startServer((_req, res) => {
      // The merchant takes 250 ms, as the attempt's clock sees it.
      clock += 250;
      res.writeHead(201, { 'content-type': 'text/plain' }).end('thanks');
    });
    const opts = baseOptions(`http://127.0.0.1:${server.port}/hooks/pay?x=1`);

    const result = await postWebhook({ ...opts, now: () => clock });

    expect(result).toEqual({ status: 201, body: 'thanks', truncated: false, latencyMs: 250 });
    expect(server.received).toHaveLength(1);
    const [req] = server.received;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/hooks/pay?x=1');
    expect(req?.body).toBe(opts.body);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['webhook-signature']).toBe(SIGNATURE);
  });

  test('when the merchant answers 302 with a Location, then 302 is returned and the target is not requested', async () => {
    server = await startServer((req, res) => {
      if (req.url === '/hook') res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(200).end('followed');
    });

    const result = await postWebhook(baseOptions(`http://127.0.0.1:${server.port}/hook`));

    expect(result.status).toBe(302);
    expect(server.received.map((r) => r.url)).toEqual(['/hook']);
  });

  // In these three nothing answers until the attempt gives up: only its own deadline can end it.
  test('when the merchant sends no headers, then it rejects with "no answer within 300 ms" and hangs up', async () => {
    server = await startServer(() => undefined);

    await expect(
      postWebhook({ ...baseOptions(`http://127.0.0.1:${server.port}/`), timeoutMs: 300 }),
    ).rejects.toThrow(/^no answer within 300 ms$/);
    await server.hungUp;
  });

  test('when the merchant sends headers but trickles the body without end, then it rejects with "no answer within 300 ms" and hangs up', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    });

    await expect(
      postWebhook({ ...baseOptions(`http://127.0.0.1:${server.port}/`), timeoutMs: 300 }),
    ).rejects.toThrow(/^no answer within 300 ms$/);
    await server.hungUp;
  });

  test('when name resolution never answers, then it still rejects with "no answer within 300 ms"', async () => {
    await expect(
      postWebhook({
        ...baseOptions('http://hook.test:8080/'),
        timeoutMs: 300,
        guardAddresses: true,
        lookup: silentLookup,
      }),
    ).rejects.toThrow(/^no answer within 300 ms$/);
  });

  test('when the response is 200 KiB and the cap is 64 KiB, then exactly 64 KiB is returned, marked truncated', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('a'.repeat(200 * 1024));
    });

    const result = await postWebhook(baseOptions(`http://127.0.0.1:${server.port}/`));

    expect(result.status).toBe(200);
    expect(result.body).toHaveLength(65536);
    expect(result.truncated).toBe(true);
  });

  // Resolving at all is the proof: reading on to the end would meet the 5 s deadline and reject.
  test('when the response never ends, then the capped body comes back and the attempt hangs up', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const flood = setInterval(() => res.write('b'.repeat(16 * 1024)), 5);
      res.on('close', () => clearInterval(flood));
    });

    const result = await postWebhook({ ...baseOptions(`http://127.0.0.1:${server.port}/`), timeoutMs: 5000 });

    expect(result.truncated).toBe(true);
    expect(result.body).toHaveLength(65536);
    await server.hungUp;
  });

  test('when the response is exactly the cap, then it is whole and not marked truncated', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200).end('c'.repeat(65536));
    });

    const result = await postWebhook(baseOptions(`http://127.0.0.1:${server.port}/`));

    expect(result.body).toHaveLength(65536);
    expect(result.truncated).toBe(false);
  });

  test('when the cap falls inside a multi-byte character, then the partial character is dropped, not mangled', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('é'.repeat(10));
    });

    const result = await postWebhook({ ...baseOptions(`http://127.0.0.1:${server.port}/`), maxBodyBytes: 5 });

    expect(result.body).toBe('éé');
    expect(result.truncated).toBe(true);
  });

  test('when the guard is on and the URL is the literal 127.0.0.1, then it is refused and the server sees no connection', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup, calls } = fakeLookup(['203.0.113.7']);

    const attempt = postWebhook({
      ...baseOptions(`http://127.0.0.1:${server.port}/`),
      guardAddresses: true,
      lookup,
    });

    await expect(attempt).rejects.toThrow(ForbiddenDestinationError);
    await expect(attempt).rejects.toThrow(
      'notify_url host "127.0.0.1" resolves to 127.0.0.1, a loopback address',
    );
    expect(server.connections()).toBe(0);
    expect(server.received).toHaveLength(0);
    // Node connects to literal addresses without resolving them, which is why the literal is checked up front.
    expect(calls).toEqual([]);
  });

  test('when the guard is on and the URL is an IPv4-mapped IPv6 literal of loopback, then it is refused and the server sees no connection', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());

    await expect(
      postWebhook({ ...baseOptions(`http://[::ffff:127.0.0.1]:${server.port}/`), guardAddresses: true }),
    ).rejects.toThrow(/resolves to ::ffff:7f00:1, a loopback address/);
    expect(server.connections()).toBe(0);
  });

  test('when the guard is on and the URL is the IPv4-compatible IPv6 literal [::127.0.0.1], then it is refused naming the loopback address it embeds', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());

    await expect(
      postWebhook({ ...baseOptions(`http://[::127.0.0.1]:${server.port}/`), guardAddresses: true }),
    ).rejects.toThrow(
      'notify_url host "::7f00:1" resolves to ::7f00:1, a loopback address (127.0.0.1 in an IPv6 form)',
    );
    expect(server.connections()).toBe(0);
  });

  test('when the guard is on and a hostname resolves to NAT64 of a private address, then it is refused at connect time', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup } = fakeLookup(['64:ff9b::a00:5']);

    await expect(
      postWebhook({ ...baseOptions(`http://hook.test:${server.port}/`), guardAddresses: true, lookup }),
    ).rejects.toThrow(
      'notify_url host "hook.test" resolves to 64:ff9b::a00:5, a private address (10.0.0.5 in an IPv6 form)',
    );
    expect(server.connections()).toBe(0);
  });

  test('when the guard is on and a hostname resolves to the IPv4-compatible form of loopback, then it is refused at connect time', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup } = fakeLookup(['::127.0.0.1']);

    await expect(
      postWebhook({ ...baseOptions(`http://hook.test:${server.port}/`), guardAddresses: true, lookup }),
    ).rejects.toThrow(
      'notify_url host "hook.test" resolves to ::127.0.0.1, a loopback address (127.0.0.1 in an IPv6 form)',
    );
    expect(server.connections()).toBe(0);
  });

  test('when the guard is off and the URL is the literal 127.0.0.1, then lookup is not consulted at all', async () => {
    server = await startServer((_req, res) => res.writeHead(204).end());
    const { lookup, calls } = fakeLookup(['10.9.9.9']);

    const result = await postWebhook({ ...baseOptions(`http://127.0.0.1:${server.port}/`), lookup });

    expect(result.status).toBe(204);
    expect(calls).toEqual([]);
  });

  test('when the guard is on and a hostname resolves to 127.0.0.1, then it is refused at connect time and the server sees no connection', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup, calls } = fakeLookup(['127.0.0.1']);

    const attempt = postWebhook({
      ...baseOptions(`http://hook.test:${server.port}/`),
      guardAddresses: true,
      lookup,
    });

    await expect(attempt).rejects.toThrow(ForbiddenDestinationError);
    await expect(attempt).rejects.toThrow(
      'notify_url host "hook.test" resolves to 127.0.0.1, a loopback address',
    );
    expect(calls).toEqual([{ hostname: 'hook.test', all: true }]);
    expect(server.connections()).toBe(0);
    expect(server.received).toHaveLength(0);
  });

  test('when the guard is on and a hostname resolves to a public and a private address, then it is refused', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup } = fakeLookup(['8.8.8.8', '127.0.0.1']);

    await expect(
      postWebhook({ ...baseOptions(`http://hook.test:${server.port}/`), guardAddresses: true, lookup }),
    ).rejects.toThrow('notify_url host "hook.test" resolves to 127.0.0.1, a loopback address');
    expect(server.connections()).toBe(0);
  });

  test('when the guard is on and node asks for a single address, then a private answer is still refused', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end());
    const { lookup, calls } = fakeLookup(['192.168.1.10']);
    const previous = net.getDefaultAutoSelectFamily();
    net.setDefaultAutoSelectFamily(false);
    try {
      await expect(
        postWebhook({ ...baseOptions(`http://hook.test:${server.port}/`), guardAddresses: true, lookup }),
      ).rejects.toThrow('notify_url host "hook.test" resolves to 192.168.1.10, a private address');
    } finally {
      net.setDefaultAutoSelectFamily(previous);
    }
    expect(calls).toEqual([{ hostname: 'hook.test', all: false }]);
  });

  test('when the guard is off and a hostname resolves to 127.0.0.1, then it is delivered through the injected lookup', async () => {
    server = await startServer((_req, res) => res.writeHead(200).end('ok'));
    const { lookup, calls } = fakeLookup(['127.0.0.1']);

    const result = await postWebhook({ ...baseOptions(`http://hook.test:${server.port}/`), lookup });

    expect(result).toMatchObject({ status: 200, body: 'ok' });
    expect(calls).toHaveLength(1);
    expect(server.received[0]?.headers.host).toBe(`hook.test:${server.port}`);
  });

  test('when the guard is on and a hostname resolves to a public address, then the guard lets the connect go ahead', async () => {
    // 4000::1 is unicast to ipaddr.js yet unallocated by IANA, so no third party is
    // contacted: the attempt ends unreachable or unanswered, but not refused by the guard.
    const { lookup, calls } = fakeLookup(['4000::1']);

    const error: unknown = await postWebhook({
      ...baseOptions('http://hook.test:8080/'),
      timeoutMs: 300,
      guardAddresses: true,
      lookup,
    }).then(
      () => undefined,
      (err: unknown) => err,
    );

    expect(calls).toHaveLength(1);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ForbiddenDestinationError);
    expect((error as Error).message).toMatch(/^(no answer within 300 ms|connect E[A-Z]+ 4000::1:8080)$/);
  });

  test('when nothing listens on the port, then the error is one clean line without the request headers', async () => {
    const closed = await startServer(() => undefined);
    const port = closed.port;
    await closed.close();

    const error: unknown = await postWebhook(baseOptions(`http://127.0.0.1:${port}/`)).then(
      () => undefined,
      (err: unknown) => err,
    );

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(SIGNATURE);
  });

  test('when every resolved address refuses the connection, then each failure is named on one line', async () => {
    const closed = await startServer(() => undefined);
    const port = closed.port;
    await closed.close();
    const { lookup } = fakeLookup(['::1', '127.0.0.1']);

    await expect(postWebhook({ ...baseOptions(`http://hook.test:${port}/`), lookup })).rejects.toThrow(
      new RegExp(`^connect ECONNREFUSED ::1:${port}; connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`),
    );
  });

  test.each(['ftp://hook.example/notify', 'file:///etc/passwd'])(
    'when the notify_url is %s, then it is rejected naming the scheme',
    async (url) => {
      const scheme = url.slice(0, url.indexOf(':'));
      await expect(postWebhook(baseOptions(url))).rejects.toThrow(
        `notify_url scheme "${scheme}" is not supported`,
      );
    },
  );
});
