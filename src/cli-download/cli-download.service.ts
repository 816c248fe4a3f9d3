import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { packagePath } from '../config/package-root.js';
import { AppError } from '../problem/app-error.js';
import { installPage } from './cli-download.page.js';

/** The string constant the bundle carries in place of the service address (cli/leads.ts, DEFAULT_BASE_URL). */
export const BASE_URL_PLACEHOLDER = '"__LEADS_BASE_URL__"';
/** Where `npm run build` writes the client's bundle, from the package's folder. */
export const CLI_BUNDLE_PATH = 'dist/cli/leads.cjs';

export interface CliFile {
  /** The file's text; its UTF-8 bytes are what sha256 and etag describe. */
  body: string;
  sha256: string;
  etag: string;
}

/** The command-line client as served: the built bundle with this service's PUBLIC_BASE_URL baked in. */
@Injectable()
export class CliDownloadService implements OnModuleInit {
  private file?: CliFile;
  private page?: string;
  /** The bundle's absolute path (a spec points it elsewhere). */
  protected readonly bundleFile = packagePath(CLI_BUNDLE_PATH);

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  onModuleInit(): void {
    // Read once at start when it exists; a missing bundle is retried on each request (answered 503 meanwhile).
    this.load();
  }

  /** The served file, or a 503 problem when the bundle has not been built. */
  get(): CliFile {
    const file = this.file ?? this.load();
    if (!file) {
      throw new AppError(
        'service_unavailable',
        `The command-line client is not built on this server (${CLI_BUNDLE_PATH} is missing); the operator must run \`npm run build\`.`,
        { headers: { 'Retry-After': '60' } },
      );
    }
    return file;
  }

  /** The install page of the served file (cli-download.page.ts). */
  installPage(): string {
    this.get();
    return this.page!;
  }

  private load(): CliFile | undefined {
    let source: string;
    try {
      source = readFileSync(this.bundleFile, 'utf8');
    } catch {
      return undefined;
    }
    const body = source.split(BASE_URL_PLACEHOLDER).join(JSON.stringify(this.config.publicBaseUrl));
    const sha256 = createHash('sha256').update(body, 'utf8').digest('hex');
    this.file = { body, sha256, etag: `"${sha256.slice(0, 32)}"` };
    this.page = installPage(this.config.publicBaseUrl, this.config.version, sha256);
    return this.file;
  }
}
