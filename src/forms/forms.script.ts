import { readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';

/**
 * The embeddable form script, served at /forms/leads.js as it is: a real source file, so that the type checker
 * (tsconfig.form.json) and the linter see it, read once like the GraphQL schema.
 */
export const LEADS_FORM_FILE = packagePath('src/forms/leads-form.js');
export const LEADS_FORM_JS = readFileSync(LEADS_FORM_FILE, 'utf8');
