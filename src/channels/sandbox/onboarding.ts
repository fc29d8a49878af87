/** The sandbox's onboarding port: file uploads, applications and their review. */
import type { ApplicationState, OnboardingPort } from '../ports';
import type { SandboxClient } from './client';
import {
  parseApplicationState,
  parseFileUploaded,
  toWireSubmitApplication,
  toWireUploadFile,
} from './transformers';

const UPLOAD_TIMEOUT_MS = 60_000;

const SANDBOX_FILE_ID = /^sbx_file_[a-z2-7]{24}$/;

export function sandboxOnboarding(client: SandboxClient): OnboardingPort {
  const port: OnboardingPort = {
    fileIdPattern: SANDBOX_FILE_ID,
    uploadFile: async (_ctx, input) => {
      // Up to 5 MiB travels (as base64): allow it more than a payment call's deadline.
      const answer = await client.call(
        'POST',
        '/v1/files',
        toWireUploadFile(input),
        Math.max(client.options.timeoutMs, UPLOAD_TIMEOUT_MS),
      );
      return parseFileUploaded(client.ok('upload file', answer));
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const answer = await client.call('POST', '/v1/applications', toWireSubmitApplication(input));
      return parseApplicationState(client.ok('submit application', answer));
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const answer = await client.call('GET', `/v1/applications/${encodeURIComponent(applicationId)}`);
      return parseApplicationState(client.ok('query application', answer));
    },
  };
  return port;
}
