import { handlerLock } from '../../src/platform/workflow/lock';

const tick = () => new Promise((r) => setImmediate(r));

describe('handlerLock', () => {
  test('when many callers run at once, then one runs at a time, in the order they came', async () => {
    const lock = handlerLock();
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        lock.runExclusive(async () => {
          inside += 1;
          most = Math.max(most, inside);
          order.push(i);
          // Yield across several turns, as a handler awaiting an activity would.
          for (let k = 0; k < 3; k++) await tick();
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  test('when a caller fails, then its error reaches it and the next caller still runs', async () => {
    const lock = handlerLock();
    const first = lock.runExclusive(async () => {
      throw new Error('refused');
    });
    const second = lock.runExclusive(async () => 'ran');
    await expect(first).rejects.toThrow('refused');
    await expect(second).resolves.toBe('ran');
    expect(lock.isLocked()).toBe(false);
  });

  test('when a caller is running or waiting, then the lock says it is held', async () => {
    const lock = handlerLock();
    let release!: () => void;
    const running = lock.runExclusive(() => new Promise<void>((r) => (release = r)));
    await tick();
    expect(lock.isLocked()).toBe(true);
    release();
    await running;
    expect(lock.isLocked()).toBe(false);
  });
});
