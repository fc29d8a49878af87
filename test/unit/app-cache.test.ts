/**
 * The API's app cache: entries served only while changes are heard, forgotten on a change, and a
 * read that raced a change never cached.
 */
import { AppCache, type AppSource } from '../../src/modules/apps/cache';
import type { AppWithSecret } from '../../src/modules/apps/repository';

function appOf(appId: string, status: 'active' | 'disabled' = 'active'): AppWithSecret {
  const at = new Date(0);
  return { appId, name: 'a', scopes: ['payments'], status, createdAt: at, updatedAt: at, secret: 's' };
}

/** A source that counts its reads, with a status per app that tests change. */
function source() {
  const status = new Map<string, 'active' | 'disabled'>();
  let reads = 0;
  let beforeAnswer: (() => void) | undefined;
  const src: AppSource = {
    findWithSecret: async (appId) => {
      reads += 1;
      const s = status.get(appId);
      await Promise.resolve();
      beforeAnswer?.();
      return s ? appOf(appId, s) : undefined;
    },
  };
  return {
    src,
    status,
    reads: () => reads,
    duringRead: (fn: (() => void) | undefined) => (beforeAnswer = fn),
  };
}

test('when changes are heard, then an app is read once for many requests; a change makes it read again', async () => {
  const s = source();
  s.status.set('app_1', 'active');
  const cache = new AppCache(s.src, 60_000);
  cache.setListening(true);
  for (let i = 0; i < 5; i++) expect((await cache.findWithSecret('app_1'))?.status).toBe('active');
  expect(s.reads()).toBe(1);
  s.status.set('app_1', 'disabled');
  cache.invalidate('app_1');
  expect((await cache.findWithSecret('app_1'))?.status).toBe('disabled');
  expect(s.reads()).toBe(2);
});

test('when changes are not heard (no listener, or it was lost), then every request reads the app', async () => {
  const s = source();
  s.status.set('app_1', 'active');
  const cache = new AppCache(s.src, 60_000);
  await cache.findWithSecret('app_1');
  await cache.findWithSecret('app_1');
  cache.setListening(true);
  await cache.findWithSecret('app_1');
  cache.setListening(false);
  await cache.findWithSecret('app_1');
  expect(s.reads()).toBe(4);
});

test('when a change lands while an app is being read, then what was read is not cached', async () => {
  const s = source();
  s.status.set('app_1', 'active');
  const cache = new AppCache(s.src, 60_000);
  cache.setListening(true);
  // The read saw the old row; the change and its notification arrive before it answers.
  s.duringRead(() => {
    s.status.set('app_1', 'disabled');
    cache.invalidate('app_1');
  });
  expect((await cache.findWithSecret('app_1'))?.status).toBe('active');
  s.duringRead(undefined);
  expect((await cache.findWithSecret('app_1'))?.status).toBe('disabled');
});

test('when an entry is older than its time to live, or the app is unknown, then it is read again', async () => {
  const s = source();
  s.status.set('app_1', 'active');
  const cache = new AppCache(s.src, 0);
  cache.setListening(true);
  await cache.findWithSecret('app_1');
  await cache.findWithSecret('app_1');
  await cache.findWithSecret('app_none');
  await cache.findWithSecret('app_none');
  expect(s.reads()).toBe(4);
});
