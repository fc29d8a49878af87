import { spawn, type ChildProcess } from 'node:child_process';
import { durapayBin, globalState } from './state';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker logs that it runs; rejects if it exits first. */
  ready: Promise<void>;
  /** SIGTERM and wait, unless it has already exited. */
  stop(): Promise<void>;
}

/**
 * A real `durapay worker` process on its own task queue, as production runs it: tests kill it
 * with SIGKILL to prove that work survives a crash.
 */
export function spawnWorker(taskQueue: string, env: Record<string, string>): WorkerProcess {
  const state = globalState();
  const child = spawn(process.execPath, [durapayBin(), 'worker'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: state.temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      DURAPAY_WORKFLOW_BUNDLE: state.bundlePath,
      LOG_LEVEL: 'info',
      // Several worker processes run at once in the tests; one that serves metrics says so.
      WORKER_METRICS_PORT: 'off',
      // The keys the tests' stacks seal payloads with; a test of other keys passes its own.
      DURAPAY_PAYLOAD_KEYS: state.payloadKeys,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('"message":"worker running"')) resolve();
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it ran:\n${out}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
