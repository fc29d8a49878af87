import { Background } from '../../sandbox/background';

const failures: unknown[] = [];
const background = () => new Background((err) => failures.push(err));

afterEach(() => {
  failures.length = 0;
  jest.useRealTimers();
});

describe('Background', () => {
  test('when a task schedules another, then idle waits for both', async () => {
    const bg = background();
    const done: string[] = [];
    bg.later(
      20,
      () => {
        done.push('callback');
        bg.later(20, () => void done.push('its retry'), 'T1');
      },
      'T1',
    );
    await bg.idle('T1');
    expect(done).toEqual(['callback', 'its retry']);
  });

  test('when a running task is still awaiting, then idle waits for it to end', async () => {
    const bg = background();
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let ended = false;
    bg.run(async () => {
      await held;
      ended = true;
    }, 'T1');
    const idle = bg.idle('T1').then(() => ended);
    release();
    expect(await idle).toBe(true);
  });

  test('when another order has work due, then idle for this one does not wait for it; idle without one does', async () => {
    jest.useFakeTimers();
    const bg = background();
    const done: string[] = [];
    bg.later(60_000, () => void done.push('other'), 'T2');
    bg.later(60_000, () => void done.push('no order'));
    bg.run(() => void done.push('mine'), 'T1');
    await bg.idle('T1');
    expect(done).toEqual(['mine']);
    let all = false;
    const everything = bg.idle().then(() => (all = true));
    await jest.advanceTimersByTimeAsync(59_999);
    expect(all).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await everything;
    expect(done).toEqual(['mine', 'other', 'no order']);
  });

  test('when a delay is longer than setTimeout can hold, then it is waited out in full', async () => {
    jest.useFakeTimers();
    const bg = background();
    const longest = 2 ** 31 - 1;
    let ran = false;
    bg.later(longest + 5_000, () => void (ran = true), 'T1');
    await jest.advanceTimersByTimeAsync(longest + 4_999);
    expect(ran).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await bg.idle('T1');
    expect(ran).toBe(true);
  });

  test('when a task fails, then onError hears it and idle still ends', async () => {
    const bg = background();
    bg.run(() => {
      throw new Error('receiver gone');
    }, 'T1');
    await bg.idle('T1');
    expect(failures).toEqual([new Error('receiver gone')]);
  });

  test('when closed, then what was due never runs, nothing new is taken, and idle ends', async () => {
    jest.useFakeTimers();
    const bg = background();
    let ran = 0;
    bg.later(20, () => void ran++, 'T1');
    bg.close();
    bg.later(0, () => void ran++, 'T1');
    bg.run(() => void ran++, 'T1');
    await bg.idle();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(ran).toBe(0);
    expect(bg.signal.aborted).toBe(true);
  });

  test('when a deadline is set, then idle does not wait for it, it runs when due (longer than setTimeout holds), and close drops it', async () => {
    jest.useFakeTimers();
    const bg = background();
    const longest = 2 ** 31 - 1;
    const done: string[] = [];
    bg.deadline(longest + 5_000, () => void done.push('expired'), 'T1');
    bg.deadline(1_000, () => void done.push('early'), 'T2');
    await bg.idle('T1');
    await bg.idle();
    await jest.advanceTimersByTimeAsync(longest + 4_999);
    expect(done).toEqual(['early']);
    await jest.advanceTimersByTimeAsync(1);
    await bg.idle('T1');
    expect(done).toEqual(['early', 'expired']);
    bg.deadline(1_000, () => void done.push('after close'), 'T1');
    bg.close();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(done).toEqual(['early', 'expired']);
  });
});
