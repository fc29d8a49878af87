import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * @seriousme/openapi-schema-validator (the OpenAPI Initiative's JSON schemas) in a child
 * process: it is an ES module, which jest's CommonJS runtime cannot load.
 */
export function validateOpenApi(doc: unknown): { valid: boolean; version?: string; errors?: unknown } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      import fs from 'node:fs';
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(fs.readFileSync(process.argv[1], 'utf8')));
      process.stdout.write(JSON.stringify(result.valid ? { valid: true, version: validator.version } : result));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
      cwd: path.join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    return JSON.parse(out) as { valid: boolean; version?: string };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
