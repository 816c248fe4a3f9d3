import { describe, expect, it } from '@jest/globals';
import { SourceMap } from 'node:module';
import { transformSync } from 'esbuild';
import { applyEdits, lineLevelMappings } from './text-edits.mjs';

/** Where `text` is in `code`, as a zero-based line and column. */
function position(code, text) {
  const offset = code.indexOf(text);
  if (offset < 0) throw new Error(`${text} is not in the code`);
  const before = code.slice(0, offset).split('\n');
  return [before.length - 1, before.at(-1).length];
}

const SOURCE = ['function first() {', '  return "añ";', '}', 'const second = () => first();', 'export { second };', ''].join('\n');

describe('applyEdits', () => {
  it('keeps a source map true through insertions, removals and replacements, on any line', () => {
    const { code, map } = transformSync(SOURCE, { sourcemap: 'external', sourcefile: 'input.ts', format: 'esm', charset: 'utf8' });
    const edits = [
      [code.indexOf('function first'), code.indexOf('function first'), '/* inserted */'],
      [code.indexOf('"a'), code.indexOf('"a') + 1, "'"],
      [code.indexOf('\u00f1'), code.indexOf('\u00f1') + 1, '\\u00f1'],
      [code.indexOf('const second'), code.indexOf('const second') + 'const'.length, 'let\n  '],
    ];
    const out = applyEdits(code, edits, JSON.parse(map));
    expect(out.code).toContain('/* inserted */function first() {\n  return \'a\\u00f1";\n}\nlet\n   second = () => first();');
    const mapped = new SourceMap(out.map);
    for (const [token, line, column] of [
      ['first()', 0, 9],
      ['return', 1, 2],
      ['second =', 3, 6],
      ['first();', 3, 21],
    ]) {
      const [atLine, atColumn] = position(out.code, token);
      expect([token, mapped.findEntry(atLine, atColumn)]).toEqual([token, expect.objectContaining({ originalLine: line, originalColumn: column })]);
    }
  });

  it('refuses overlapping edits', () => {
    expect(() =>
      applyEdits('abcdef', [
        [1, 3, ''],
        [2, 4, ''],
      ]),
    ).toThrow('overlapping edits at 2');
  });

  it('keeps one mapping per original line for the sources it is told to, and every mapping of the others', () => {
    const library = transformSync('export function shipped(a) { return a.b.c(a, [1, 2]); }\n', {
      sourcemap: 'external',
      sourcefile: 'node_modules/lib/index.js',
    });
    const own = transformSync('export function own(a) { return a.b.c(a, [1, 2]); }\n', { sourcemap: 'external', sourcefile: 'src/own.ts' });
    const decoded = (map) => new SourceMap(map);
    const coarse = lineLevelMappings(JSON.parse(library.map), (source) => source.startsWith('node_modules/'));
    const kept = lineLevelMappings(JSON.parse(own.map), (source) => source.startsWith('node_modules/'));
    expect(kept.mappings).toBe(JSON.parse(own.map).mappings);
    expect(coarse.mappings.split(';').map((line) => line.split(',').filter(Boolean).length)).toEqual([1, 1, 1, 0]);
    // a frame anywhere in the function's body still names its file and line
    const [line, column] = position(library.code, 'a.b.c');
    expect(decoded(coarse).findEntry(line, column)).toMatchObject({ originalSource: expect.stringContaining('node_modules/lib/index.js'), originalLine: 0 });
  });
});
