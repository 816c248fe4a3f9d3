import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Injectable } from '@nestjs/common';
import { parse } from 'yaml';

/** The contract file is the source of truth; it is served as read, only turned from YAML into JSON. */
export const OPENAPI_FILE = resolve('openapi/openapi-leads.yaml');

@Injectable()
export class OpenApiService {
  readonly document: Record<string, unknown> = parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
  readonly json: string = JSON.stringify(this.document);
}
