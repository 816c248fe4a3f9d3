import { packageFiles } from '../config/package-root.js';

/** Where the e-mail templates are written; the release bundle carries their text instead (scripts/release/bundle.mjs). */
export const TEMPLATES_FOLDER = 'src/mail/templates';

/** The e-mail templates (src/mail/templates/*.eta), by file name, in name order (embedded by the release build). */
export const TEMPLATE_FILES = packageFiles(TEMPLATES_FOLDER, '.eta');
