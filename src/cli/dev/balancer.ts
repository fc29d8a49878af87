import net from 'node:net';

export interface Balancer {
  port: number;
  url: string;
  /** Connections handed to each backend port so far. */
  connections: Map<number, number>;
  close(): Promise<void>;
}

/**
 * A TCP round-robin load balancer on loopback, in front of several API processes — the part a
 * deployment puts before its API replicas. A connection goes to the next backend; one that
 * refuses (a killed process) is skipped for the next, so only the requests in flight on a
 * process that dies fail, as behind a real balancer.
 */
export async function startBalancer(backends: () => number[], port = 0): Promise<Balancer> {
  let next = 0;
  const connections = new Map<number, number>();
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    let upstream: net.Socket | undefined;
    client.once('close', () => {
      open.delete(client);
      upstream?.destroy();
    });
    client.on('error', () => upstream?.destroy());
    client.pause();
    const ports = backends();
    // This connection's turn, taken once: a refused backend passes it to the next in line.
    const first = next++;
    const tryBackend = (attempt: number) => {
      if (attempt >= ports.length || client.destroyed) {
        client.destroy();
        return;
      }
      const target = ports[(first + attempt) % ports.length]!;
      const socket = net.connect({ host: '127.0.0.1', port: target });
      upstream = socket;
      const refused = () => tryBackend(attempt + 1);
      socket.once('error', refused);
      socket.once('connect', () => {
        socket.off('error', refused);
        connections.set(target, (connections.get(target) ?? 0) + 1);
        open.add(socket);
        socket.on('error', () => client.destroy());
        // A backend that ends ends the client (the pipe); one that fails cuts it.
        socket.once('close', () => open.delete(socket));
        client.pipe(socket);
        socket.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined); // accept errors (EMFILE) drop that connection only
  const bound = (server.address() as net.AddressInfo).port;
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
