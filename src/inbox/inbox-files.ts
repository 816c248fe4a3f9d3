import { readFileSync } from 'node:fs';
import { packageFiles, packagePath } from '../config/package-root.js';

/** Where the inbox's templates and assets are written; the release bundle carries their text (scripts/release/bundle.mjs). */
export const VIEWS_FOLDER = 'src/inbox/views';
export const ASSETS_FOLDER = 'src/inbox/assets';
/** htmx as its npm package ships it, served by the service (no CDN). */
export const HTMX_FILE = 'node_modules/htmx.org/dist/htmx.min.js';

/** The inbox's eta templates (src/inbox/views/*.eta), by file name (embedded by the release build). */
export const VIEW_FILES = packageFiles(VIEWS_FOLDER, '.eta');

/** The files of /inbox/assets/: our CSS and script, and htmx (embedded by the release build). */
export const ASSET_FILES: Readonly<Record<string, string>> = {
  ...packageFiles(ASSETS_FOLDER, '.css'),
  ...packageFiles(ASSETS_FOLDER, '.js'),
  'htmx.min.js': readFileSync(packagePath(HTMX_FILE), 'utf8'),
};
