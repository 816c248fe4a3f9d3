import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's folder: the nearest one above this code that holds package.json. This code runs from src/ (Jest),
 * dist/src/ (tsc's output) and dist/server.cjs (the bundle), so a fixed number of `..` would fit only one of them;
 * the working directory fits none when the service is started from elsewhere. A package.json without a name is a
 * marker, not the package: dist/dev/'s, which only says that `npm run start:dev`'s output is CommonJS.
 */
function findPackageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isPackage(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${start}`);
  }
}

const isPackage = (file: string): boolean => existsSync(file) && typeof (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'string';

export const PACKAGE_ROOT = findPackageRoot();

/** A file of the package (its sources, dist/, package.json) by its path from the package's folder. */
export const packagePath = (path: string): string => join(PACKAGE_ROOT, path);

/**
 * The text of a package folder's files with this extension, by file name, in name order: read from src/ under Jest,
 * tsc's dist/src and `npm run start:dev`. The release build replaces the module that calls this with one holding the
 * very same files (scripts/release/bundle.mjs), since the image has no src/.
 */
export function packageFiles(folder: string, extension: string): Readonly<Record<string, string>> {
  return Object.fromEntries(
    readdirSync(packagePath(folder))
      .filter((name) => name.endsWith(extension))
      .sort()
      .map((name) => [name, readFileSync(packagePath(`${folder}/${name}`), 'utf8')]),
  );
}
