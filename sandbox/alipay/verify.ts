/**
 * The gateway's check of a request's common parameters, in the order the public error codes are
 * documented: who sent it (app_id), the signature type, a signature at all, the time, the
 * version, the charset and format, then the RSA2 signature itself against the app public key.
 */
import type { KeyObject } from 'node:crypto';
import {
  API_VERSION,
  MAX_CLOCK_SKEW_MS,
  SIGN_TYPE,
  beijingTime,
  invalidArgument,
  missingArgument,
  parseBeijingTime,
  rsa2Verify,
  signContent,
  type Params,
} from './wire';

export interface App {
  appId: string;
  publicKey: KeyObject;
}

/** How much of the verified text a failure quotes back, as Alipay's sub_msg does. */
const QUOTED_CONTENT_CHARS = 1_000;

/** Throws the gateway's answer to the first problem with the common parameters; returns if none. */
export function checkCommonParams(params: Params, app: App, now: number): void {
  const appId = params.app_id;
  if (!appId) throw missingArgument('isv.missing-app-id', '缺少AppID参数');
  if (appId !== app.appId) throw invalidArgument('isv.invalid-app-id', `无效的AppID参数: ${appId}`);
  const signType = params.sign_type;
  if (!signType) throw missingArgument('isv.missing-signature-type', '缺少签名类型参数 sign_type');
  if (signType !== SIGN_TYPE) {
    throw invalidArgument(
      'isv.invalid-signature-type',
      `无效的签名类型参数: ${signType}; this app signs with ${SIGN_TYPE}`,
    );
  }
  if (!params.sign) throw missingArgument('isv.missing-signature', '缺少签名参数 sign');
  checkTimestamp(params.timestamp, now);
  if (!params.version) throw missingArgument('isv.missing-version', '缺少版本参数 version');
  if (params.version !== API_VERSION) {
    throw invalidArgument(
      'isv.invalid-parameter',
      `参数无效 version: ${params.version} is not ${API_VERSION}`,
    );
  }
  const charset = params.charset;
  if (charset && !/^utf-?8$/i.test(charset)) {
    throw invalidArgument('isv.invalid-charset', `字符集错误: ${charset}; the gateway reads utf-8`);
  }
  if (params.format && params.format.toUpperCase() !== 'JSON') {
    throw invalidArgument('isv.invalid-format', `无效的数据格式: ${params.format}; only JSON is answered`);
  }
  const content = signContent(params);
  if (!rsa2Verify(content, params.sign, app.publicKey)) {
    throw invalidArgument(
      'isv.invalid-signature',
      `验签出错，建议检查签名字符串或签名私钥与应用公钥是否匹配，网关生成的验签字符串为：${content.slice(0, QUOTED_CONTENT_CHARS)}`,
    );
  }
}

/**
 * `yyyy-MM-dd HH:mm:ss`, read as Beijing time, within 15 minutes of the gateway's clock. A
 * client that formats its own local time on a machine that is not on UTC+8 is refused here,
 * as it would be at Alipay; the message says so, since that is the usual cause.
 */
function checkTimestamp(timestamp: string | undefined, now: number): void {
  if (!timestamp) throw missingArgument('isv.missing-timestamp', '缺少时间戳参数 timestamp');
  const at = parseBeijingTime(timestamp);
  if (at === undefined) {
    throw invalidArgument(
      'isv.invalid-timestamp',
      `非法的时间戳参数: ${timestamp} is not yyyy-MM-dd HH:mm:ss`,
    );
  }
  const skew = at - now;
  if (Math.abs(skew) > MAX_CLOCK_SKEW_MS) {
    const hours = Math.round(skew / 3_600_000);
    const hint =
      hours !== 0 && Math.abs(skew - hours * 3_600_000) <= MAX_CLOCK_SKEW_MS
        ? ` (${Math.abs(hours)} h ${hours < 0 ? 'behind' : 'ahead'}: timestamp is Beijing time, UTC+8; was it formatted in another time zone?)`
        : '';
    throw invalidArgument(
      'isv.invalid-timestamp',
      `非法的时间戳参数: ${timestamp} is more than 15 minutes from the gateway's ${beijingTime(now)}${hint}`,
    );
  }
}
