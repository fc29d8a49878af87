/**
 * freePort: a port drawn outside the kernel's ephemeral range (what the kernel hands out for
 * port 0 and for outgoing connections cannot take it before its process binds it), free when
 * drawn, and never handed out twice by one process.
 */
import net from 'node:net';
import fs from 'node:fs';
import { freePort } from '../../src/platform/net';

/** The kernel's ephemeral range on Linux; elsewhere its usual 49152–65535. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return [Number(low), Number(high)];
  } catch {
    return [49_152, 65_535];
  }
}

test('when ports are drawn, then each is outside the ephemeral range, free to listen on, and none twice', async () => {
  const [low] = ephemeralRange();
  const ports: number[] = [];
  for (let i = 0; i < 200; i++) ports.push(await freePort());
  expect(ports.filter((p) => p >= low || p < 1024)).toEqual([]);
  expect(new Set(ports).size).toBe(ports.length);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ports[0], '127.0.0.1', resolve);
  });
  await new Promise((r) => server.close(r));
});
