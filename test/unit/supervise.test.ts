import { spawn, type ChildProcess } from 'node:child_process';
import { Supervised, type RestartPolicy } from '../../src/cli/dev/supervise';

const FAST: RestartPolicy = { delaysMs: [20, 40], stableAfterMs: 60_000, maxRestarts: 3, windowMs: 60_000 };

/** A child that lives until killed. */
const sleeper = async (): Promise<ChildProcess> =>
  spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

async function until(probe: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Supervised', () => {
  test('when the child is killed, then it is restarted with a line saying why and when', async () => {
    const lines: string[] = [];
    const gaveUp: string[] = [];
    const s = new Supervised({
      name: 'worker',
      launch: sleeper,
      say: (l) => lines.push(l),
      giveUp: (r) => gaveUp.push(r),
      policy: FAST,
      stopGraceMs: 1_000,
    });
    await s.start();
    const first = s.process!;
    first.kill('SIGKILL');
    await until(() => s.process !== first && s.process?.pid !== undefined);
    expect(lines[0]).toBe(
      'The worker stopped unexpectedly (killed by SIGKILL); restarting it in 0.02 s (restart 1 of at most 3 within 1 min) …',
    );
    await until(() => lines.length === 2);
    expect(lines[1]).toBe(`The worker is running again (pid ${s.process!.pid}).`);
    expect(gaveUp).toEqual([]);
    const second = s.process!;
    await s.stop();
    await exited(second);
    expect(lines).toHaveLength(2);
  });

  test('when the child keeps crashing past the limit, then the supervisor is told to give up, with the reason', async () => {
    const gaveUp: string[] = [];
    let launches = 0;
    const s = new Supervised({
      name: 'API',
      launch: async () => {
        launches += 1;
        return spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
      },
      say: () => undefined,
      giveUp: (r) => gaveUp.push(r),
      policy: FAST,
      stopGraceMs: 1_000,
    });
    await s.start();
    await until(() => gaveUp.length === 1);
    expect(launches).toBe(4);
    expect(gaveUp[0]).toBe('the API stopped 4 times within 1 min (last: exit code 3)');
    await s.stop();
  });

  test('when a restart cannot start the child, then that counts as a crash and it is tried again', async () => {
    let launches = 0;
    const lines: string[] = [];
    const s = new Supervised({
      name: 'embedded Postgres',
      launch: async () => {
        launches += 1;
        if (launches === 2) throw new Error('port taken');
        return sleeper();
      },
      say: (l) => lines.push(l),
      giveUp: () => undefined,
      policy: FAST,
      stopGraceMs: 1_000,
    });
    await s.start();
    s.process!.kill('SIGKILL');
    await until(() => launches === 3 && lines.some((l) => l.includes('running again')));
    expect(lines.some((l) => l.includes('(could not start: port taken)'))).toBe(true);
    await s.stop();
  });

  test('when a restarted child ran long enough before it stopped again, then the wait starts from the first again', async () => {
    const lines: string[] = [];
    // How long each child ran is read on this clock, so that a slow machine cannot make it longer.
    let clock = 0;
    const s = new Supervised({
      name: 'worker',
      launch: sleeper,
      say: (l) => lines.push(l),
      giveUp: () => undefined,
      policy: { ...FAST, delaysMs: [20, 400], stableAfterMs: 300 },
      stopGraceMs: 1_000,
      now: () => clock,
    });
    await s.start();
    s.process!.kill('SIGKILL');
    await until(() => lines.length === 2);
    // Quickly again: the second wait.
    s.process!.kill('SIGKILL');
    await until(() => lines.length === 4);
    expect(lines[2]).toContain('restarting it in 0.4 s (restart 2 of');
    // After running as long as stableAfterMs: the first wait again.
    clock += 300;
    s.process!.kill('SIGKILL');
    await until(() => lines.length === 6);
    expect(lines[4]).toContain('restarting it in 0.02 s (restart 3 of');
    await s.stop();
  });

  test('when it is stopped on purpose, then it is not restarted', async () => {
    const lines: string[] = [];
    const s = new Supervised({
      name: 'worker',
      launch: sleeper,
      say: (l) => lines.push(l),
      giveUp: () => undefined,
      policy: FAST,
      stopGraceMs: 1_000,
    });
    await s.start();
    const child = s.process!;
    await s.stop();
    await exited(child);
    // A restart would have been announced as the child exited, before this line runs.
    expect(lines).toEqual([]);
    expect(s.process).toBe(child);
  });
});
