import { contractTimeOf, localDayStart } from '../../src/modules/contracts/rules';
import type { TestStack } from './harness';
import type { PaymentsClient } from './payments';
import type { Receiver } from './receiver';
import { until } from './wait';

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

/** A contract as `GET /api/v1/contracts/{contract_no}` answers it, the fields tests read. */
export interface ContractData {
  contract_no: string;
  merchant_contract_no: string;
  status: string;
  sign_url: string | null;
  cancelled_by: string | null;
  last_failure: { period: number; reason: string } | null;
  deductions: {
    period: number;
    attempt: number;
    merchant_order_no: string;
    trade_no: string | null;
    status: string;
    reason: string | null;
  }[];
}

/** An app's reads of its contracts, each waiting for what it checks rather than sleeping. */
export function contractReads(pay: PaymentsClient) {
  const contract = async (contractNo: string, client = pay) =>
    (await client.get<ContractData>(`/api/v1/contracts/${contractNo}`)).data!;
  return {
    contract,
    /** The contract once it has `status`. */
    statusIs: (contractNo: string, status: string, timeoutMs = 120_000) =>
      until(
        `contract ${contractNo} ${status}`,
        async () => {
          const c = await contract(contractNo);
          return c.status === status ? c : undefined;
        },
        timeoutMs,
      ),
    /** The app's cancel, sent again while it answers channel_timeout (the unsigning not confirmed in time), as a client does. */
    cancelContract: (contractNo: string, body: Record<string, unknown> = {}) =>
      until(`the cancel of ${contractNo}`, async () => {
        const a = await pay.post<ContractData>(`/api/v1/contracts/${contractNo}/cancel`, body);
        return a.code === 'channel_timeout' ? undefined : a;
      }),
  };
}

/** What the receiver got about a contract: a count of its events by type, and of each order's payment events. */
export function contractEvents(receiver: Receiver, contractNo: string, tradeNos: string[] = []) {
  const bodies = receiver.received.map(
    (r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> },
  );
  const mine = bodies.filter(
    (b) => b.data.contract_no === contractNo || tradeNos.includes(String(b.data.trade_no)),
  );
  return (type: string, tradeNo?: string) =>
    mine.filter((b) => b.type === type && (tradeNo === undefined || b.data.trade_no === tradeNo)).length;
}
