/**
 * Alipay's trade complaint as durapay reads it (src/channels/alipay/complaints.ts): the fields of
 * alipay.merchant.tradecomplain.query's answer as Alipay publishes them (TradeComplainQueryResponse
 * with reply_detail_infos of ReplyRecordResponse), mapped onto durapay's complaint and steps.
 */
import {
  complaintOf,
  stateOf,
  stepsOf,
  type AlipayComplaintStatus,
} from '../../src/channels/alipay/complaints';

const APP_ID = '2021000000000001';

/** A query answer shaped as Alipay's published response model, Beijing times and yuan amounts. */
const answer = {
  complain_event_id: '2020092300102000000001459758',
  status: 'MERCHANT_PROCESSING' as AlipayComplaintStatus,
  trade_no: '2020092322001404111436405758',
  merchant_order_no: 'P202009231030001234567890',
  gmt_create: '2020-09-23 10:30:00',
  gmt_modified: '2020-09-23 11:00:00',
  leaf_category_name: '退款',
  complain_reason: '商品质量问题',
  content: '已经扣除了我的钱，为什么再次扣款？？？',
  images: ['https://mdn.alipayobjects.com/complain/1.png'],
  phone_no: '13800138000',
  trade_amount: '20.00',
  complain_amount: '5.50',
  target_id: '2021000000000099',
  target_type: 'APPID',
  reply_detail_infos: [
    {
      replier_name: '商家',
      replier_role: 'MERCHANT',
      gmt_create: '2020-09-23 10:40:00',
      content: '您好，已为您核实',
    },
    {
      replier_name: '投诉人',
      replier_role: 'USER',
      gmt_create: '2020-09-23 10:50:00',
      content: '什么时候退？',
    },
  ],
};

test('when a query answer is read, then its order, amounts in fen, words, phone and images are the complaint', () => {
  expect(complaintOf(answer, APP_ID)).toEqual({
    complaintId: '2020092300102000000001459758',
    state: 'processing',
    complainedAt: new Date('2020-09-23T02:30:00Z'),
    detail: '商品质量问题: 已经扣除了我的钱，为什么再次扣款？？？',
    subMerchantNo: '2021000000000099',
    orders: [
      { tradeNo: 'P202009231030001234567890', channelTradeNo: '2020092322001404111436405758', amount: 2000 },
    ],
    problemType: 'refund',
    applyRefundAmount: 550,
    payerPhone: '13800138000',
    fullRefunded: false,
    complaintTimes: 1,
    awaitsReply: true,
    imageUrls: ['https://mdn.alipayobjects.com/complain/1.png'],
  });
});

test('when the negotiation is read, then the complaint comes first and the replies follow in time, named as the rules read them', () => {
  const shuffled = { ...answer, reply_detail_infos: [...answer.reply_detail_infos].reverse() };
  expect(stepsOf(shuffled).map((s) => [s.type, s.details, s.at.toISOString()])).toEqual([
    ['USER_CREATE_COMPLAINT', answer.content, '2020-09-23T02:30:00.000Z'],
    ['MERCHANT_RESPONSE', '您好，已为您核实', '2020-09-23T02:40:00.000Z'],
    ['USER_RESPONSE', '什么时候退？', '2020-09-23T02:50:00.000Z'],
  ]);
});

test.each<[AlipayComplaintStatus, boolean, string]>([
  ['MERCHANT_PROCESSING', false, 'pending'],
  ['MERCHANT_PROCESSING', true, 'processing'],
  ['PLATFORM_PROCESSING', false, 'processing'],
  ['MERCHANT_FEEDBACKED', true, 'processed'],
  ['FINISHED', true, 'processed'],
  ['CANCELLED', false, 'processed'],
  ['PLATFORM_FINISH', false, 'processed'],
  ['CLOSED', false, 'processed'],
])('when Alipay says %s (merchant replied: %s), then the complaint is %s', (status, replied, state) => {
  const steps = stepsOf({
    ...answer,
    status,
    reply_detail_infos: replied ? answer.reply_detail_infos.slice(0, 1) : [],
  });
  expect(stateOf(status, steps)).toBe(state);
});

test('when a complaint asks for no refund and names no app, then it is `other`, about the calling app, and waits on nobody', () => {
  const c = complaintOf(
    {
      ...answer,
      leaf_category_name: '服务问题',
      complain_reason: '态度差',
      target_id: '',
      reply_detail_infos: [],
    },
    APP_ID,
  );
  expect(c).toMatchObject({
    problemType: 'other',
    subMerchantNo: APP_ID,
    awaitsReply: false,
    state: 'pending',
  });
  expect(c).not.toHaveProperty('applyRefundAmount');
});
