import { readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';
import { LEAD_FIELD_NAMES, LEAD_FIELDS } from '../leads/lead-rules.js';

/** Where the file lists the fields and their bounds: valid JavaScript, so that it type-checks and lints as it is. */
const FIELDS_STAND_IN = 'var FIELDS = /** @type {string[]} */ ([]);';
const LIMITS_STAND_IN = 'var LIMITS = /** @type {Record<string, {min: number, max: number}>} */ ({});';

/**
 * The embeddable form script, served at /forms/leads.js: a real source file, so that the type checker
 * (tsconfig.form.json) and the linter see it, read once like the GraphQL schema, with the lead fields written in.
 */
export const LEADS_FORM_FILE = packagePath('src/forms/leads-form.js');
export const LEADS_FORM_JS = withLeadFields(readFileSync(LEADS_FORM_FILE, 'utf8'));

function withLeadFields(script: string): string {
  // The bounds are for the messages ("needs at least 8 digits"); the service still decides what is valid.
  const limits = Object.fromEntries(LEAD_FIELD_NAMES.map((name) => [name, { min: LEAD_FIELDS[name].min, max: LEAD_FIELDS[name].max }]));
  return [
    [FIELDS_STAND_IN, `var FIELDS = ${JSON.stringify(LEAD_FIELD_NAMES)};`],
    [LIMITS_STAND_IN, `var LIMITS = ${JSON.stringify(limits)};`],
  ].reduce((text, [standIn, line]) => {
    if (text.split(standIn).length !== 2) throw new Error(`${LEADS_FORM_FILE} must hold the line \`${standIn}\` once`);
    // A function, so that no `$` in the line is read as a replacement pattern.
    return text.replace(standIn, () => line);
  }, script);
}
