import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import { packagePath } from '../config/package-root.js';

/**
 * The contract as served: Redocly's bundle of openapi/ (the source of truth, split by module), which `npm run build`
 * writes as compact JSON (scripts/build-contract.mjs) because parsing the YAML here took a tenth of the start-up time.
 * Served byte for byte; the docs suite holds it equal to a fresh bundle of the sources.
 */
export const OPENAPI_FILE = packagePath('dist/openapi-leads.json');

@Injectable()
export class OpenApiService {
  readonly bytes: Buffer = readFileSync(OPENAPI_FILE);
  readonly json: string = this.bytes.toString('utf8');
  readonly document: Record<string, unknown> = JSON.parse(this.json) as Record<string, unknown>;
}
