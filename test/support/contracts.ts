import { contractTimeOf, localDayStart } from '../../src/modules/contracts/rules';
import type { TestStack } from './harness';

/**
 * A contract's first deduction at 07:00 China time on the stack's contract clock, more than a
 * day and an hour from now (the notice's day and some), so that every period's window opens at
 * 07:00 with room for all three attempts, whatever the time of day a test runs at.
 */
export function sevenAmAfterANotice(stack: TestStack): string {
  const soonest = contractTimeOf(stack.services.contractClock!, Date.now()) + 86_400_000 + 3_600_000;
  let next = localDayStart(soonest) + 7 * 3_600_000;
  if (next < soonest) next += 86_400_000;
  return new Date(next).toISOString();
}
