/**
 * The gateway's timers (notification retries, slow refunds, asynchronous settles, trade expiry),
 * all stopped by one close(), each under the out_trade_no of the trade it is for when it is
 * work for that trade (../background.ts).
 */
import { Background } from '../background';

export interface SchedulerLogger {
  warn(message: string, meta?: object): void;
}

export class Scheduler extends Background {
  constructor(logger: SchedulerLogger) {
    super((err) =>
      logger.warn('alipay sandbox timer failed', {
        error: err instanceof Error ? err.message : String(err),
      }),
    );
  }
}
