import { execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Response } from 'supertest';

type Json = Record<string, any>;

export const CONTRACT_BUNDLE = 'dist/openapi-leads.json';

/** The contract as served (the bundle of openapi/), rebuilt first when a source is newer, so a unit run needs no build. */
function loadContract(): Json {
  const built = statSync(CONTRACT_BUNDLE, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = readdirSync('openapi', { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.yaml'));
  if (sources.some((file) => statSync(join('openapi', file)).mtimeMs > built))
    execFileSync(process.execPath, ['scripts/build-contract.mjs'], { stdio: 'inherit' });
  return JSON.parse(readFileSync(CONTRACT_BUNDLE, 'utf8'));
}

export const CONTRACT: Json = loadContract();

// ajv-formats is CommonJS with a default export; under nodenext its default is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// The e-mail rule JSON Schema cannot state as a pattern: the local part's length in UTF-8 octets (RFC 5321).
ajv.addKeyword({
  keyword: 'x-local-part-max-octets',
  type: 'string',
  schemaType: 'number',
  validate: (max: number, email: string) => Buffer.byteLength(email.trim().slice(0, Math.max(0, email.trim().lastIndexOf('@')))) <= max,
});
// And that no character of it is one Unicode normalisation (NFKC) replaces: the fullwidth ｋ, the Kelvin sign K.
ajv.addKeyword({
  keyword: 'x-no-compatibility-characters',
  type: 'string',
  schemaType: 'boolean',
  validate: (refused: boolean, email: string) => !refused || [...email.trim()].every((character) => character.normalize('NFKC') === character),
});
ajv.addSchema({ ...CONTRACT, $id: 'contract' }, 'contract');

// A literal path before a templated one that also matches it (/api/v1/leads/export before /api/v1/leads/{id}), as the router tries them.
const templates = Object.keys(CONTRACT.paths)
  .map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));

// The (operation, status) pairs this test file saw, for test/support/contract-coverage.reporter.cjs: one file per jest
// project and process, in the folder the reporter names (nothing is recorded when it does not run).
const COVERAGE_DIR = process.env.CONTRACT_COVERAGE_DIR;
const COVERAGE_PROJECT = (globalThis as { CONTRACT_COVERAGE_PROJECT?: string }).CONTRACT_COVERAGE_PROJECT;
const exercised = new Set<string>();

function recordExercised(method: string, template: string, status: string): void {
  const pair = `${method.toUpperCase()} ${template} ${status}`;
  if (!COVERAGE_DIR || !COVERAGE_PROJECT || exercised.has(pair)) return;
  exercised.add(pair);
  appendFileSync(join(COVERAGE_DIR, `${COVERAGE_PROJECT}.${process.pid}.txt`), `${pair}\n`);
}

/** JSON Schema of a component or of a place in the contract, resolved through the whole document. */
export function contractSchema(pointer: string) {
  return ajv.getSchema(`contract#${pointer}`) ?? ajv.compile({ $ref: `contract#${pointer}` });
}

function escape(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Asserts that a response is what the contract promises for its request: a documented status for the operation
 * (or, for a path the contract does not have, a 404 problem), a documented media type, and a body that validates.
 */
export function expectContract(res: Response): Response {
  const req = (res as unknown as { req: { method: string; path: string } }).req;
  const method = req.method.toLowerCase();
  const path = new URL(req.path, 'http://x').pathname;
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const match = templates.find((t) => t.regex.test(path));
  let pointer: string;
  if (!match) {
    // Outside the contract only problems are possible: unknown path, malformed path, oversize headers or body.
    if (![400, 404, 413, 431].includes(res.status)) throw new Error(`${method.toUpperCase()} ${path}: not in the contract, answered ${res.status}`);
    pointer = '/components/schemas/Problem';
  } else if (!CONTRACT.paths[match.template][method]) {
    if (res.status !== 405 && !(method === 'head' && CONTRACT.paths[match.template].get)) {
      throw new Error(`${method.toUpperCase()} ${path}: method not in the contract, answered ${res.status}`);
    }
    // The path's operations document the 405 that its other methods get.
    for (const [other, operation] of Object.entries(CONTRACT.paths[match.template] as Json)) {
      if (res.status === 405 && operation?.responses?.['405']) recordExercised(other, match.template, '405');
    }
    pointer = '/components/schemas/Problem';
  } else {
    const operation = CONTRACT.paths[match.template][method];
    const key = [String(res.status), `${String(res.status)[0]}XX`, 'default'].find((k) => operation.responses[k]);
    if (!key) throw new Error(`${method.toUpperCase()} ${path}: status ${res.status} is not documented`);
    recordExercised(method, match.template, key);
    let response = operation.responses[key];
    let responsePointer = `/paths/${escape(match.template)}/${method}/responses/${key}`;
    if (response.$ref) {
      responsePointer = response.$ref.slice(1);
      response = responsePointer
        .split('/')
        .slice(1)
        .reduce((node: Json, token: string) => node[token.replace(/~1/g, '/').replace(/~0/g, '~')], CONTRACT);
    }
    if (!response.content) {
      if (res.text) throw new Error(`${method.toUpperCase()} ${path} ${res.status}: the contract documents no body`);
      return res;
    }
    if (!response.content[mediaType]) {
      throw new Error(`${method.toUpperCase()} ${path} ${res.status}: media type ${mediaType} not documented (${Object.keys(response.content)})`);
    }
    const content = response.content[mediaType];
    // A sequence of JSON texts (JSON Lines): each line against the media type's x-item-schema.
    if (content['x-item-schema'])
      return expectLines(res, contractSchema(`${responsePointer}/content/${escape(mediaType)}/x-item-schema`), `${method.toUpperCase()} ${path}`);
    if (!content.schema || !/json/.test(mediaType)) return res;
    pointer = `${responsePointer}/content/${escape(mediaType)}/schema`;
  }
  if (method === 'head') return res;
  const validate = contractSchema(pointer);
  const body = res.body && Object.keys(res.body).length ? res.body : JSON.parse(res.text);
  if (!validate(body)) {
    throw new Error(`${method.toUpperCase()} ${path} ${res.status} does not match the contract: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`);
  }
  return res;
}

/** Each line of a JSON Lines body (LF-terminated, the last one too) validates against the item schema. */
function expectLines(res: Response, validate: ReturnType<typeof contractSchema>, where: string): Response {
  const body: unknown = res.body;
  const text = typeof res.text === 'string' ? res.text : typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : '';
  if (text !== '' && !text.endsWith('\n')) throw new Error(`${where} ${res.status}: the last JSON line does not end with a line feed`);
  for (const [index, line] of text.split('\n').slice(0, -1).entries()) {
    if (!validate(JSON.parse(line)))
      throw new Error(`${where} ${res.status} line ${index + 1} does not match the contract: ${ajv.errorsText(validate.errors)}\n${line.slice(0, 500)}`);
  }
  return res;
}
