import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { AppConfig } from '../config/config.js';
import { AppError } from '../problem/app-error.js';
import { CliDownloadService } from './cli-download.service.js';

describe('CliDownloadService', () => {
  let dir: string;
  const config = { publicBaseUrl: 'https://leads.example', version: '9.9.9' } as AppConfig;
  /** The service with its bundle in a scratch folder instead of the package's dist/. */
  class ScratchCliDownloadService extends CliDownloadService {
    protected override readonly bundleFile = join(dir, 'leads.cjs');
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-service-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 service_unavailable while the bundle is missing, then serves it once built', () => {
    const service = new ScratchCliDownloadService(config);
    service.onModuleInit();
    let error: unknown;
    try {
      service.get();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'service_unavailable', detail: expect.stringContaining('dist/cli/leads.cjs is missing') });

    writeFileSync(join(dir, 'leads.cjs'), '#!/usr/bin/env node\nvar DEFAULT_BASE_URL = "__LEADS_BASE_URL__";\n');
    const file = service.get();
    expect(file.body).toBe('#!/usr/bin/env node\nvar DEFAULT_BASE_URL = "https://leads.example";\n');
    expect(file.sha256).toBe(createHash('sha256').update(file.body).digest('hex'));
    expect(file.etag).toBe(`"${file.sha256.slice(0, 32)}"`);
  });
});
