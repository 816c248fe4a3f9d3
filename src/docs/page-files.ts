import { packageFiles } from '../config/package-root.js';

/** Where the pages are written; the release bundle carries their text instead (scripts/release/bundle.mjs). */
export const PAGES_FOLDER = 'src/docs/pages';

/** The Markdown files of the docs pages, by file name, in name order (embedded by the release build). */
export const PAGE_FILES = packageFiles(PAGES_FOLDER, '.md');
