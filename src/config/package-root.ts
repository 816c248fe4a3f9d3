import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's folder: the nearest one above this code whose package.json names a package. This code runs from src/ (Jest),
 * dist/src/ (tsc's output), dist/dev/src/ (start:dev) and dist/server.cjs (the bundle), so a fixed number of `..` would fit only one of them;
 * the working directory fits none when the service is started from elsewhere.
 */
function findPackageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isPackageJson(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${start}`);
  }
}

/** A package's own package.json has a name; `npm run start:dev`'s dist/dev/package.json only marks that folder as CommonJS. */
function isPackageJson(path: string): boolean {
  try {
    return typeof (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === 'string';
  } catch {
    return false;
  }
}

export const PACKAGE_ROOT = findPackageRoot();

/** A file of the package (its sources, dist/, package.json) by its path from the package's folder. */
export const packagePath = (path: string): string => join(PACKAGE_ROOT, path);
