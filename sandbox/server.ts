import type { Server } from 'node:http';
import express from 'express';
import { migrateSandbox } from './migrations';
import { createSandboxRouter, type SandboxDeps } from './simulator';

export interface SandboxServerOptions extends Omit<SandboxDeps, 'publicBaseUrl'> {
  port: number;
  host: string;
  /** Where a buyer's browser reaches this server; http://<host>:<port> unless set. */
  publicBaseUrl?: string;
}

export interface SandboxServer {
  server: Server;
  /** The public base URL with /sandbox: what the gateway's SANDBOX_BASE_URL should be. */
  url: string;
  close(): Promise<void>;
}

/** The sandbox alone, serving /sandbox on a port of its own once its tables are up to date. */
export async function serveSandbox(options: SandboxServerOptions): Promise<SandboxServer> {
  const { port, host, ...deps } = options;
  const applied = await migrateSandbox(deps.db.sequelize, deps.logger);
  if (applied.length > 0) deps.logger.info('sandbox tables migrated', { migrations: applied });
  const publicBaseUrl = (options.publicBaseUrl ?? `http://${host}:${port}`).replace(/\/+$/, '');
  const app = express();
  // Before the first app.use: Express builds its router with the settings of that moment.
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.use('/sandbox', createSandboxRouter({ ...deps, publicBaseUrl }));
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(listening)));
  });
  return {
    server,
    url: `${publicBaseUrl}/sandbox`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
