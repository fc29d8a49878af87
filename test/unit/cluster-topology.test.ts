import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBalancer } from '../../src/cli/dev/balancer';
import {
  cachedServerBinaries,
  clusterServerConfig,
  DEPLOY_DYNAMIC_CONFIG,
  TEMPORAL_SERVER_VERSION,
} from '../../src/cli/dev/temporal-server';

async function backend(name: string): Promise<{ port: number; server: http.Server }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { connection: 'close' }).end(name));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

async function get(url: string): Promise<string> {
  const res = await fetch(url, { headers: { connection: 'close' } });
  return res.text();
}

describe('the balancer in front of the API processes', () => {
  test('when connections arrive, then they alternate between the backends', async () => {
    const [a, b] = [await backend('a'), await backend('b')];
    const balancer = await startBalancer(() => [a.port, b.port]);
    try {
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await get(balancer.url));
      expect(answers.filter((x) => x === 'a')).toHaveLength(3);
      expect(answers.filter((x) => x === 'b')).toHaveLength(3);
      expect(balancer.connections.get(a.port)).toBe(3);
    } finally {
      await balancer.close();
      a.server.close();
      b.server.close();
    }
  });

  test('when a backend is gone, then its turn goes to the next one and no request fails', async () => {
    const [a, b] = [await backend('a'), await backend('b')];
    const balancer = await startBalancer(() => [a.port, b.port]);
    try {
      await new Promise((r) => a.server.close(r));
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await get(balancer.url));
      expect(answers).toEqual(['b', 'b', 'b', 'b']);
    } finally {
      await balancer.close();
      b.server.close();
    }
  });
});

describe('the Temporal server of the production topology', () => {
  test('when its binaries are cached, then they sit beside the CLI, pinned to the version the CLI embeds', () => {
    expect(TEMPORAL_SERVER_VERSION).toBe('1.29.1');
    expect(cachedServerBinaries('/c')).toEqual({
      server: '/c/temporal-server-1.29.1/temporal-server',
      sqlTool: '/c/temporal-server-1.29.1/temporal-sql-tool',
    });
  });

  test('when its config is written, then it persists to Postgres with the given shards and the deployment dynamic config', () => {
    const config = clusterServerConfig({
      pg: { host: '127.0.0.1', port: 5432, user: 'postgres', password: 'pw' },
      databasePrefix: 'temporal_x',
      shards: 4,
      dynamicConfigFile: DEPLOY_DYNAMIC_CONFIG,
      ports: { frontend: 1, frontendHttp: 2, history: 3, matching: 4, worker: 5 },
      membershipPorts: { frontend: 11, history: 12, matching: 13, worker: 14 },
    }) as {
      persistence: { numHistoryShards: number; datastores: Record<string, { sql: Record<string, unknown> }> };
      services: Record<string, { rpc: { grpcPort: number; membershipPort: number } }>;
      dynamicConfigClient: { filepath: string };
    };
    expect(config.persistence.numHistoryShards).toBe(4);
    expect(config.persistence.datastores.default!.sql).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal_x',
      connectAddr: '127.0.0.1:5432',
    });
    expect(config.persistence.datastores.visibility!.sql.databaseName).toBe('temporal_x_visibility');
    expect(Object.keys(config.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    expect(config.services.history!.rpc).toMatchObject({ grpcPort: 3, membershipPort: 12 });
    expect(config.dynamicConfigClient.filepath).toMatch(/deploy\/temporal\/dynamicconfig\.yaml$/);
  });
});
