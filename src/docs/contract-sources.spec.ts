import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { CONTRACT } from '../../test/support/contract.js';

/**
 * The contract's sources under openapi/ against the served bundle: every path and component a module file defines is
 * in the bundle under its own name. Redocly drops what nothing refers to and would rename a component whose name
 * another module already took; neither may happen silently.
 */

const COMPONENT_FILES: Record<string, string> = {
  'schemas.yaml': 'schemas',
  'responses.yaml': 'responses',
  'examples.yaml': 'examples',
  'parameters.yaml': 'parameters',
  'headers.yaml': 'headers',
  'security-schemes.yaml': 'securitySchemes',
  'path-items.yaml': 'pathItems',
};

/** A module's paths: paths.yaml, or <area>-paths.yaml where one module's files are split by area (openapi/inbox/). */
const isPaths = (file: string) => /(^|-)paths\.yaml$/.test(basename(file));
/** The components section a file fills: by its name, or by the name after its area (`settings-responses.yaml`). */
const componentsOf = (file: string) => {
  const name = basename(file);
  return COMPONENT_FILES[name] ?? COMPONENT_FILES[name.replace(/^[a-z]+-/, '')];
};

const sources = readdirSync('openapi', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.includes('/') && file.endsWith('.yaml'))
  .map((file) => ({ file, keys: Object.keys(parse(readFileSync(join('openapi', file), 'utf8')) ?? {}) }));

describe('the contract sources under openapi/', () => {
  it('are module files this test knows how to read', () => {
    expect(sources.length).toBeGreaterThan(10);
    expect(sources.map(({ file }) => basename(file)).filter((name) => !isPaths(name) && !componentsOf(name))).toEqual([]);
  });

  it('are in the served bundle: each path of a paths.yaml under its path, each component under its name', () => {
    const missing = sources.flatMap(({ file, keys }) => {
      const section = isPaths(file) ? CONTRACT.paths : CONTRACT.components[componentsOf(file)];
      return keys.filter((key) => !section?.[key]).map((key) => `${file}: ${key}`);
    });
    expect(missing).toEqual([]);
  });

  it('define each path and component once', () => {
    const seen = sources.flatMap(({ file, keys }) => keys.map((key) => `${isPaths(file) ? 'paths' : componentsOf(file)}/${key}`));
    expect(seen.filter((key, i) => seen.indexOf(key) !== i)).toEqual([]);
  });
});
