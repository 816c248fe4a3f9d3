import { readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';
import { LEAD_FIELD_NAMES } from '../leads/lead-rules.js';

/** Where the file lists the fields: valid JavaScript, so that it type-checks and lints as it is. */
const FIELDS_STAND_IN = 'var FIELDS = /** @type {string[]} */ ([]);';

/**
 * The embeddable form script, served at /forms/leads.js: a real source file, so that the type checker
 * (tsconfig.form.json) and the linter see it, read once like the GraphQL schema, with the lead fields written in.
 */
export const LEADS_FORM_FILE = packagePath('src/forms/leads-form.js');
export const LEADS_FORM_JS = withLeadFields(readFileSync(LEADS_FORM_FILE, 'utf8'));

function withLeadFields(script: string): string {
  if (script.split(FIELDS_STAND_IN).length !== 2) throw new Error(`${LEADS_FORM_FILE} must hold the line \`${FIELDS_STAND_IN}\` once`);
  return script.replace(FIELDS_STAND_IN, `var FIELDS = ${JSON.stringify(LEAD_FIELD_NAMES)};`);
}
