import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import { packagePath } from '../config/package-root.js';

/**
 * The contract (openapi/openapi-leads.yaml, the source of truth) as JSON: `npm run build` converts it, because parsing
 * the YAML here took a tenth of the start-up time. The docs suite checks that what is served equals the YAML.
 */
export const OPENAPI_FILE = packagePath('dist/openapi-leads.json');

@Injectable()
export class OpenApiService {
  readonly document: Record<string, unknown> = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
  readonly json: string = JSON.stringify(this.document);
  readonly bytes: Buffer = Buffer.from(this.json);
}
