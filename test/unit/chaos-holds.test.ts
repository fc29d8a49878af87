/**
 * The chaos runner's holds (chaos/lib/holds.ts): which workflow a held attempt was in is read
 * from its held file, which the attempt writes just after taking the arming.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { workflowIdIn } from '../../chaos/lib/holds';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holds-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('when a held attempt writes its workflow id late (a loaded machine), then the id is still read, not taken for an unreached point', async () => {
  const file = path.join(dir, 'held.createChannelTransfer.after.123');
  fs.writeFileSync(file, '');
  setTimeout(() => fs.writeFileSync(file, 'transfer:T1'), 400);
  await expect(workflowIdIn(file)).resolves.toBe('transfer:T1');
});

test('when the id is there at once, then it is read at once', async () => {
  const file = path.join(dir, 'held.recordTransferStep.before.123');
  fs.writeFileSync(file, 'transfer:T2');
  await expect(workflowIdIn(file)).resolves.toBe('transfer:T2');
});
