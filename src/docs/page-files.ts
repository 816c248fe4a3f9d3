import { readdirSync, readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';

/** Where the pages are written; the release bundle carries their text instead (scripts/release/bundle.mjs). */
export const PAGES_FOLDER = 'src/docs/pages';

/**
 * The Markdown files of the docs pages, by file name, in name order. Read from the package's src/ here (Jest, tsc's
 * dist/src, `npm run start:dev`); the release build replaces this module with one that holds these very files, since
 * the image has no src/.
 */
export const PAGE_FILES: Readonly<Record<string, string>> = Object.fromEntries(
  readdirSync(packagePath(PAGES_FOLDER))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => [name, readFileSync(packagePath(`${PAGES_FOLDER}/${name}`), 'utf8')]),
);
