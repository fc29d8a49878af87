/** The sandbox's payments port: create (with a pay page and QR image), query and close. */
import { qrImage } from '../../platform/qr';
import type { PaymentsPort } from '../ports';
import type { SandboxClient } from './client';
import { parseOrderCreated, toWireCreateOrder } from './transformers';

// The simulator has one merchant and no sub-merchants of its own: the context's account and
// sub-merchant only travel on the create (as the order's sub_merchant_no), as they always have.
export function sandboxPayments(client: SandboxClient): PaymentsPort {
  const port: PaymentsPort = {
    create: async (ctx, input) => {
      const answer = await client.call('POST', '/v1/orders', toWireCreateOrder(ctx, input));
      const created = parseOrderCreated(client.ok('create order', answer));
      if (input.payMethod !== 'qr_code') return created;
      // The buyer scans the QR code: the credential carries it rendered, as real channels' do.
      const qr = String(created.payCredential.qr_code);
      return { ...created, payCredential: { ...created.payCredential, qr_image: await qrImage(qr) } };
    },
    query: async (_ctx, tradeNo) => {
      const answer = await client.call('GET', `/v1/orders/${encodeURIComponent(tradeNo)}`);
      return client.paymentState('query order', answer);
    },
    close: async (_ctx, tradeNo) => {
      const answer = await client.call('POST', `/v1/orders/${encodeURIComponent(tradeNo)}/close`, {});
      return client.paymentState('close order', answer);
    },
  };
  return port;
}
