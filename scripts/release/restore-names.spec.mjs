import { describe, expect, it } from '@jest/globals';
import { transformSync } from 'esbuild';
import { restoreNames } from './restore-names.mjs';

/** Runs CommonJS text and returns its exports. */
function run(code) {
  const module = { exports: {} };
  new Function('module', 'exports', code)(module, module.exports);
  return module.exports;
}

/** Every function's and class's name reachable from the exports, by path. */
function names(value, path = 'exports', seen = new Set(), out = {}) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return out;
  seen.add(value);
  if (typeof value === 'function') out[path] = value.name;
  for (const key of Object.getOwnPropertyNames(value)) {
    if (['prototype', 'caller', 'arguments', 'name', 'length'].includes(key)) continue;
    names(Object.getOwnPropertyDescriptor(value, key).value, `${path}.${key}`, seen, out);
  }
  return out;
}

const calls = (code) => code.split('__name(').length - 1;

/** esbuild's own keepNames output, as the bundle has it. */
const keepNames = (source) => transformSync(source, { keepNames: true, minifySyntax: true, format: 'cjs', target: 'node20' }).code;

describe('restoreNames', () => {
  it('gives every function and class the name keepNames gives, mostly without __name calls', () => {
    const source = `
      const res = {};
      res.status = function status(code) { this.statusCode = code; return 'status ' + code; };
      res.send = async function send() { return 'sent'; };
      function helper() { return helper.name; }
      const arrow = () => 1;
      let assigned; assigned = function () {};
      const { withDefault = function () {} } = {};
      exports.res = res;
      exports.helper = helper;
      exports.arrow = arrow;
      exports.assigned = assigned;
      exports.withDefault = withDefault;
      exports.Lead = class Lead { static table = 'leads'; name() { return 'not the static name'; } };
      exports.Outer = class Base { static make() { return new Base(); } };
      exports.obj = { method() {}, property: function () {}, 'quoted key': function () {} };
      exports.make = () => function inner() { return inner; };
    `;
    const before = keepNames(source);
    const after = restoreNames(before);
    expect(names(run(after.code))).toEqual(names(run(before)));
    expect(calls(after.code)).toBeLessThan(calls(before) / 3);
    const restored = run(after.code);
    expect(restored.res.status.call({}, 201)).toBe('status 201');
    expect(restored.helper()).toBe('helper');
    expect(restored.Outer.make()).toBeInstanceOf(restored.Outer);
    const inner = restored.make()();
    expect([inner.name, inner()]).toEqual(['inner', inner]);
  });

  it('keeps __name where a named expression would capture a reference to another binding', () => {
    // esbuild renamed the class to Lead2 because another Lead exists; naming the expression Lead would capture it.
    const before = `
      var __defProp = Object.defineProperty;
      var __name = (target, value) => __defProp(target, "name", { value, configurable: true });
      var Lead = { table: 'outer' };
      var Lead2 = class { static { __name(this, "Lead"); } table() { return Lead.table; } };
      var Receipt2 = class { static { __name(this, "Receipt"); } };
      var status = 'outer status';
      var res = {};
      res.status = __name(function () { return status; }, "status");
      function parse2() { return 'parsed'; } __name(parse2, "parse");
      module.exports = { Lead2, Receipt2, res, parse2 };
    `;
    const after = restoreNames(before);
    const restored = run(after.code);
    expect(names(restored)).toEqual(names(run(before)));
    expect(restored.Lead2.name).toBe('Lead');
    expect(new restored.Lead2().table()).toBe('outer');
    expect(restored.res.status()).toBe('outer status');
    expect(restored.parse2.name).toBe('parse');
    expect(after.code).toMatch(/class Receipt\s*\{/);
    expect(after.kept).toBe(3);
  });

  it('keeps control flow and the __proto__ key as they were', () => {
    const before = `
      var __defProp = Object.defineProperty;
      var __name = (target, value) => __defProp(target, "name", { value, configurable: true });
      var ran = [];
      function f() {}
      if (false) __name(f, "f");
      ran.push('after the if');
      var proto = { __proto__: __name(function () {}, "__proto__") };
      module.exports = { ran, protoName: Object.getPrototypeOf(proto).name };
    `;
    expect(run(restoreNames(before).code)).toEqual(run(before));
    expect(run(restoreNames(before).code).ran).toEqual(['after the if']);
  });

  it('throws on input that does not parse', () => {
    expect(() => restoreNames('var x = ;')).toThrow();
  });
});
