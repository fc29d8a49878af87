/** The sandbox's callbacks port: Sandbox-Signature over the JSON body, and a `success` reply. */
import { referenceOf } from '../ports';
import type { CallbackCheck, CallbackReply, CallbackRequest, CallbacksPort, ChannelEvent } from '../ports';
import type { SandboxClient } from './client';
import { SANDBOX_SIGNATURE_HEADER, verifySandboxSignature } from './signature';
import { parseCallbackEvent, parseJson } from './transformers';

export function sandboxCallbacks(client: SandboxClient): CallbacksPort {
  const port: CallbacksPort = {
    verify: (req: CallbackRequest): Promise<CallbackCheck> => {
      const check = verifySandboxSignature(
        client.options.secret,
        headerValue(req.headers, SANDBOX_SIGNATURE_HEADER),
        req.rawBody,
      );
      return Promise.resolve(check.ok ? { ok: true } : check);
    },
    decode: async (req: CallbackRequest): Promise<ChannelEvent> =>
      parseCallbackEvent(parseJson('callback', req.rawBody.toString('utf8'))),
    identify: referenceOf,
    // The simulator, like the seed's channels, reads only the body: `success`, or anything else.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? 'success' : 'fail',
    }),
  };
  return port;
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}
