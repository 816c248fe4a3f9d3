import { readdirSync, readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';

/** Where the e-mail templates are written; the release bundle carries their text instead (scripts/release/bundle.mjs). */
export const TEMPLATES_FOLDER = 'src/mail/templates';

/**
 * The e-mail templates (src/mail/templates/*.eta), by file name, in name order. Read from the package's src/ here (Jest,
 * tsc's dist/src, `npm run start:dev`); the release build replaces this module with one that holds these very files,
 * since the image has no src/.
 */
export const TEMPLATE_FILES: Readonly<Record<string, string>> = Object.fromEntries(
  readdirSync(packagePath(TEMPLATES_FOLDER))
    .filter((name) => name.endsWith('.eta'))
    .sort()
    .map((name) => [name, readFileSync(packagePath(`${TEMPLATES_FOLDER}/${name}`), 'utf8')]),
);
