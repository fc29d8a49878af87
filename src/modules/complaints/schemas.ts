import Joi from 'joi';
import { MAX_AMOUNT } from '../orders';
import { COMPLAINT_STATES, REPLY_MAX_CHARS, REPLY_MAX_IMAGES } from './rules';

// The request schemas of SPEC §16's complaints: the routes validate with them and the OpenAPI
// document is generated from them, so the two cannot disagree.

export const listComplaintsQuery = Joi.object({
  state: Joi.string()
    .valid(...COMPLAINT_STATES)
    .description('Only complaints in this state.'),
  overdue: Joi.string()
    .valid('true', 'false')
    .description('`true`: only complaints past a deadline and not processed; `false`: only the others.'),
  merchant_id: Joi.string().min(1).max(64).description("Only complaints about this merchant's orders."),
  trade_no: Joi.string().min(1).max(64).description('Only complaints about this order.'),
  limit: Joi.string()
    .pattern(/^(100|[1-9]\d?)$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a whole number from 1 to 100' })
    .description('Default 20, at most 100.'),
  after: Joi.string().min(1).max(512).description('The `next` of the page before.'),
});

export const replyComplaintSchema = Joi.object({
  content: Joi.string()
    .trim()
    .min(1)
    .max(REPLY_MAX_CHARS)
    .required()
    .description(
      `What the payer reads, 1–${REPLY_MAX_CHARS} characters. The same content and images again is the same reply: sent once.`,
    )
    .example('您好，已为您安排退款，请留意到账。'),
  images: Joi.array()
    .max(REPLY_MAX_IMAGES)
    .items(
      Joi.object({
        filename: Joi.string()
          .pattern(/^[^/\\]{1,64}\.(jpe?g|png|bmp)$/i)
          .required()
          .messages({
            'string.pattern.base': '{{#label}} must be a file name ending .jpg, .jpeg, .png or .bmp',
          })
          .description('The image file name: `.jpg`, `.png` or `.bmp`.'),
        data: Joi.string().base64().required().description('The image bytes, base64 (at most 2 MiB).'),
      }),
    )
    .description(`Up to ${REPLY_MAX_IMAGES} images, uploaded through the channel's image API.`),
});

export const refundComplaintSchema = Joi.object({
  refund_amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .required()
    .description("What to refund, in fen: at most what the order can still refund (the book's answer)."),
  reason: Joi.string().max(256).description('Why, for the refund.'),
});

export const completeComplaintSchema = Joi.object({});
