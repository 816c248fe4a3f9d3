import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { AppConfig } from '../config/config.js';
import { AppError } from '../problem/app-error.js';
import { CliDownloadService } from './cli-download.service.js';

describe('CliDownloadService', () => {
  const cwd = process.cwd();
  let dir: string;
  const config = { publicBaseUrl: 'https://leads.example', version: '9.9.9' } as AppConfig;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-service-'));
    process.chdir(dir);
  });
  afterEach(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 service_unavailable while the bundle is missing, then serves it once built', () => {
    const service = new CliDownloadService(config);
    service.onModuleInit();
    let error: unknown;
    try {
      service.get();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'service_unavailable', detail: expect.stringContaining('dist/cli/leads.cjs is missing') });

    mkdirSync('dist/cli', { recursive: true });
    writeFileSync('dist/cli/leads.cjs', '#!/usr/bin/env node\nvar DEFAULT_BASE_URL = "__LEADS_BASE_URL__";\n');
    const file = service.get();
    expect(file.body).toBe('#!/usr/bin/env node\nvar DEFAULT_BASE_URL = "https://leads.example";\n');
    expect(file.sha256).toBe(createHash('sha256').update(file.body).digest('hex'));
    expect(file.etag).toBe(`"${file.sha256.slice(0, 32)}"`);
  });
});
