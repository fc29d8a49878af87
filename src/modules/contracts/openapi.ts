// The contract operations of the OpenAPI document, beside the routes that serve them (SPEC §17).
import { type ApiOperation } from '../../platform/http/openapi';
import { cancelContractSchema, createContractSchema, listContractsQuery } from './schemas';

const contractNo = {
  name: 'contractNo',
  description: "durapay's `contract_no`.",
  example: 'K202612062113580123456789',
};

export const contractOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/contracts',
    operationId: 'createContract',
    tag: 'Contracts',
    summary: 'Offer a recurring contract (auto-debit) for the buyer to sign',
    description:
      "Answers `sign_url`, the channel's page where the buyer signs (WeChat Pay 委托代扣, Alipay 周期扣款, the sandbox's own page). Once signed (`contract.signed`), each period's deduction is an ordinary order (`pay_method: contract`, its own `trade_no`, refundable, notified with `payment.*`) made in the channel's deduction window, after the channel's pre-deduction notice; a failed deduction is retried within the window under a new order number. The same `merchant_contract_no` again is the same contract (`is_idempotent`); with other values `400 invalid_param`. A buyer who does not sign within 24 hours leaves the contract `failed`.",
    scope: 'payments',
    body: { name: 'CreateContract', schema: createContractSchema, required: true },
    data: 'OpenedContract',
    errors: {
      400: ['invalid_param', 'invalid_amount'],
      422: ['order_not_found'],
      502: ['channel_not_support', 'channel_create_fail', 'channel_timeout'],
    },
  },
  {
    method: 'get',
    path: '/api/v1/contracts',
    operationId: 'listContracts',
    tag: 'Contracts',
    summary: "List the app's contracts",
    description: "Newest first, by keyset: pass a page's `next` as `after` for the next.",
    scope: 'payments',
    query: listContractsQuery,
    data: 'ContractPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/api/v1/contracts/{contractNo}',
    operationId: 'getContract',
    tag: 'Contracts',
    summary: 'Read a contract',
    description:
      "The plan, where the contract stands, the next deduction's window and amount, and every deduction attempt with its order. Another app's contract answers `404 contract_not_found`.",
    scope: 'payments',
    pathParameters: [contractNo],
    data: 'Contract',
    errors: { 400: ['invalid_param'], 404: ['contract_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/contracts/{contractNo}/cancel',
    operationId: 'cancelContract',
    tag: 'Contracts',
    summary: 'Cancel a contract',
    description:
      'Unsigns at the channel, then answers the contract `cancelled` (`contract.cancelled`). Nothing is deducted after it; a deduction already sent ends paid or reversed. Cancelling a cancelled contract answers it again; one that ended or failed is `422 contract_ended`.',
    scope: 'payments',
    pathParameters: [contractNo],
    body: { name: 'CancelContract', schema: cancelContractSchema, required: false },
    data: 'Contract',
    errors: {
      400: ['invalid_param'],
      404: ['contract_not_found'],
      422: ['contract_ended'],
      502: ['channel_timeout'],
    },
  },
];
