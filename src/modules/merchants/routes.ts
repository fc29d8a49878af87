import { promises as fs } from 'node:fs';
import type { Response, Router } from 'express';
import { AppError, INTERNAL_SYSTEM_MESSAGE } from '../../platform/errors';
import {
  isUploadMediaType,
  MAX_UPLOAD_BYTES,
  MAX_UPLOAD_FILE_NAME,
  UPLOAD_FORM_BYTES,
  UPLOAD_MEDIA_TYPES,
  uploadBaseName,
  type MerchantProfitSharing,
} from './rules';
import { parsePage } from '../../platform/pagination';
import { MerchantRepository } from './repository';
import { databaseError, log, merchantNotFound } from './http-errors';
import { merchantView } from './view';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import type { ChannelRegistry } from '../../channels/registry';
import { ChannelError } from '../../channels/errors';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { receiveMultipart } from '../../platform/http/multipart';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { createMerchantSchema, listMerchantsQuery } from './schemas';
import { channelAccountRoutes, type AccountRoutesDeps } from './account-routes';
import { ChannelAccountRepository } from './account-repository';

interface CreateBody {
  merchant_id: string;
  merchant_name: string;
  license_no?: string | null;
  legal_person?: string | null;
  bank_account?: string | null;
  profit_sharing?: MerchantProfitSharing | null;
}

/** Upload failures past validation (channel, file, bookkeeping) are `500 internal_system`. */
function internalError(res: Response, message: string, err?: unknown): AppError {
  log(res).error(message, err === undefined ? {} : { error: err instanceof Error ? err.stack : String(err) });
  return new AppError('internal_system', INTERNAL_SYSTEM_MESSAGE);
}

/** What the merchant routes need. */
export interface MerchantRoutesDeps extends AccountRoutesDeps {
  db: Database;
  channels: ChannelRegistry;
  /** The channel an upload goes to when it names none. */
  defaultChannel: string;
  /** The keys that seal the merchant's personal data (legal person, bank account) at rest. */
  payloadKeys: Keyring;
}

/** SPEC §5.1–5.5 and §5.8: create, list, get, upload, channel accounts. Apply and audit are mounted elsewhere. */
export function merchantRoutes(services: MerchantRoutesDeps): Router {
  const router = apiRouter();
  const repo = new MerchantRepository(services.db, services.payloadKeys);
  const accounts = new ChannelAccountRepository(services.db, services.payloadKeys);
  router.use(channelAccountRoutes(services));

  router.post('/api/v1/merchant', parseJsonBody(), async (req, res) => {
    const body = validate(createMerchantSchema, req.body) as CreateBody;
    try {
      await repo.create({
        appId: currentApp(res).appId,
        merchantId: body.merchant_id,
        merchantName: body.merchant_name,
        licenseNo: body.license_no ?? null,
        legalPerson: body.legal_person ?? null,
        bankAccount: body.bank_account ?? null,
        profitSharing: body.profit_sharing ?? null,
      });
    } catch (err) {
      throw databaseError(res, err, 'create the merchant');
    }
    sendData(res, { merchant_id: body.merchant_id });
  });

  router.get('/api/v1/merchant', async (req, res) => {
    const query = validate(listMerchantsQuery, req.query) as Record<string, string | undefined>;
    const page = parsePage(query);
    let rows;
    try {
      rows = await repo.list(currentApp(res).appId, { status: query.status || undefined }, page);
    } catch (err) {
      throw databaseError(res, err, 'list merchants');
    }
    let byMerchant;
    try {
      byMerchant = await accounts.attachedOf(
        currentApp(res).appId,
        rows.map((m) => m.merchantId),
      );
    } catch (err) {
      throw databaseError(res, err, 'list merchants');
    }
    sendData(res, { list: rows.map((m) => merchantView(m, byMerchant.get(m.merchantId) ?? [])), ...page });
  });

  // Before /:merchantID routes, so that "upload-file" is never read as a merchant id.
  router.post('/api/v1/merchant/upload-file', async (req, res) => {
    const { appId } = currentApp(res);
    const form = await receiveMultipart(req, res, {
      fileField: 'file',
      textFields: ['channel_code', 'file_media_type'],
      maxFileBytes: MAX_UPLOAD_BYTES,
      maxBodyBytes: MAX_UPLOAD_BYTES + UPLOAD_FORM_BYTES,
      maxDrainBytes: 2 * MAX_UPLOAD_BYTES + 1024 * 1024,
      tooLargeMessage: `file must be at most ${MAX_UPLOAD_BYTES / (1024 * 1024)} MiB`,
      bodyTooLargeMessage: `request body must be at most ${MAX_UPLOAD_BYTES / (1024 * 1024)} MiB of file and ${UPLOAD_FORM_BYTES / 1024} KiB of other form parts`,
    });
    let uploaded: string;
    try {
      const mediaType = form.fields.get('file_media_type') ?? '';
      if (mediaType === '') throw new AppError('invalid_param', 'file_media_type is required');
      if (!isUploadMediaType(mediaType)) {
        throw new AppError(
          'invalid_param',
          `file_media_type must be one of ${UPLOAD_MEDIA_TYPES.join(', ')}`,
        );
      }
      const file = form.file;
      if (!file) throw new AppError('invalid_param', 'file is required');
      const fileName = uploadBaseName(file.originalFilename);
      if (Array.from(fileName).length > MAX_UPLOAD_FILE_NAME) {
        throw new AppError('invalid_param', `file name must be at most ${MAX_UPLOAD_FILE_NAME} characters`);
      }

      const channelCode = form.fields.get('channel_code') || services.defaultChannel;
      if (channelCode.length > 32)
        throw new AppError('invalid_param', 'channel_code must be at most 32 characters');
      const onboarding = services.channels.get(channelCode)?.onboarding;
      // Seed 4.3 rule 4: a failure of the upload itself, which includes a channel that cannot
      // take one, is 500 internal_system; its message says which.
      if (!onboarding) {
        throw new AppError('internal_system', `channel ${channelCode} does not support onboarding`);
      }

      let content: Buffer;
      try {
        content = await fs.readFile(file.filepath);
      } catch (err) {
        throw internalError(res, 'could not read the uploaded file', err);
      }
      if (content.length !== file.size) throw internalError(res, 'the uploaded file changed on disk');

      let fileId: string;
      try {
        ({ fileId } = await onboarding.uploadFile({}, { fileName, mediaType, content }));
      } catch (err) {
        // A channel that says why it will not take the file (WeChat Pay takes no PDF) is heard.
        if (err instanceof ChannelError && err.kind === 'refused') {
          log(res).warn('upload refused by the channel', { channel_code: channelCode, error: err.message });
          throw new AppError('internal_system', `channel ${channelCode} refused the upload: ${err.message}`);
        }
        throw internalError(res, `upload to channel ${channelCode} failed`, err);
      }
      try {
        await repo.recordFile({
          appId,
          channelCode,
          fileId,
          mediaType,
          size: file.size,
          sha256: file.sha256,
          fileName,
        });
      } catch (err) {
        throw internalError(res, 'could not record the upload', err);
      }
      uploaded = fileId;
    } finally {
      // The temp file is gone before the client hears back.
      await form.discard();
    }
    sendData(res, { file_id: uploaded });
  });

  router.get('/api/v1/merchant/:merchantID', async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    let merchant;
    let attached;
    try {
      merchant = await repo.findWithPersonalData(currentApp(res).appId, merchantId);
      attached = merchant ? await accounts.attached(merchant.appId, merchantId) : [];
    } catch (err) {
      throw databaseError(res, err, 'read the merchant');
    }
    if (!merchant) throw merchantNotFound();
    sendData(res, merchantView(merchant, attached));
  });

  return router;
}
