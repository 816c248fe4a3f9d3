import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The embeddable form script, served at /forms/leads.js as it is: a real source file, so that the type checker
 * (tsconfig.form.json) and the linter see it, read once like the GraphQL schema.
 */
export const LEADS_FORM_FILE = resolve('src/forms/leads-form.js');
export const LEADS_FORM_JS = readFileSync(LEADS_FORM_FILE, 'utf8');
