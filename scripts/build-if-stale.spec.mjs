import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staleReason, STAMP, stampText } from './build-if-stale.mjs';

const HOUR_AGO = new Date(Date.now() - 3_600_000);
const MINUTE_AGO = new Date(Date.now() - 60_000);

/** A package folder whose files all date from an hour ago and whose build (the stamp) from a minute ago. */
function builtPackage() {
  const root = mkdtempSync(join(tmpdir(), 'stale-'));
  for (const dir of ['src/leads', 'migrations', 'dist']) mkdirSync(join(root, dir), { recursive: true });
  const files = [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src/main.ts',
    'src/leads/lead.dto.ts',
    'src/leads/lead.dto.spec.ts',
    'migrations/1-initial.ts',
  ];
  for (const file of files) writeFileSync(join(root, file), '');
  for (const path of [...files, 'src/leads', 'src', 'migrations']) {
    utimesSync(join(root, path), HOUR_AGO, HOUR_AGO);
  }
  writeFileSync(join(root, STAMP), stampText());
  utimesSync(join(root, STAMP), MINUTE_AGO, MINUTE_AGO);
  return root;
}

describe('staleReason (the check before npm start, npm test and the maintenance commands)', () => {
  it('finds nothing to do when the build is newer than every source', () => {
    const root = builtPackage();
    expect(staleReason(root)).toBeUndefined();
    rmSync(root, { recursive: true });
  });

  it('builds when there is no stamp: no build yet, or one that did not finish', () => {
    const root = builtPackage();
    rmSync(join(root, STAMP));
    expect(staleReason(root)).toBe('there is no complete build in dist/');
    rmSync(root, { recursive: true });
  });

  it.each(['src/leads/lead.dto.ts', 'tsconfig.build.json', 'package.json'])('names %s when it was saved after the build', (file) => {
    const root = builtPackage();
    writeFileSync(join(root, file), 'changed');
    expect(staleReason(root)).toBe(`${file} changed after the last build`);
    rmSync(root, { recursive: true });
  });

  it('builds again under another Node, whose V8 would refuse the code cache', () => {
    const root = builtPackage();
    writeFileSync(join(root, STAMP), stampText('v18.0.0'));
    utimesSync(join(root, STAMP), MINUTE_AGO, MINUTE_AGO);
    expect(staleReason(root)).toMatch(/^the build was made by another Node \(npm run build with Node v18\.0\.0\)/);
    rmSync(root, { recursive: true });
  });

  it('leaves out the tests beside the sources, which the build does not read', () => {
    const root = builtPackage();
    writeFileSync(join(root, 'src/leads/lead.dto.spec.ts'), 'changed');
    expect(staleReason(root)).toBeUndefined();
    rmSync(root, { recursive: true });
  });

  it('notices a deleted source by its folder', () => {
    const root = builtPackage();
    rmSync(join(root, 'migrations/1-initial.ts'));
    expect(staleReason(root)).toBe('migrations changed after the last build');
    rmSync(root, { recursive: true });
  });
});
