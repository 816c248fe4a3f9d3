import { execFileSync } from 'node:child_process';
import { CONTRACT } from '../../test/support/contract.js';
import { superLinearReports } from '../../test/support/regex-safety.js';
import * as rules from './lead-rules.js';

/**
 * A regular expression that backtracks super-linearly lets one request freeze the event loop
 * (docs/decisions/0014-linear-regular-expressions.md). The lint rule
 * (eslint-plugin-regexp) sees the literals in source files; this spec runs the same analysis (scslre) over what it
 * cannot see: the contract's JSON Schema patterns (ajv compiles them with the `u` flag) and the lead rules, which are
 * assembled from strings at load time.
 */

function contractPatterns(): [string, string][] {
  const found: [string, string][] = [];
  const walk = (node: unknown, path: string) => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.push([path, value]);
      else walk(value, `${path}/${key}`);
    }
  };
  walk(CONTRACT, '');
  return found;
}

const leadRulePatterns = Object.entries(rules).filter((entry): entry is [string, RegExp] => entry[1] instanceof RegExp);

describe('regular expressions are linear', () => {
  it('the analysis flags the telefone pattern that once froze the event loop, and its quadratic siblings', () => {
    expect(superLinearReports(String.raw`^\s*[0-9+\-(). ]*\s*$`)).not.toEqual([]);
    expect(superLinearReports(String.raw`^\s*[0-9+\-(). ]*\s*$`)).toContain(String.raw`Trade: [0-9+\-(). ]* / \s* on  +`);
    expect(superLinearReports(String.raw`^(?:a+)+$`).some((report) => report.includes('(exponential)'))).toBe(true);
    expect(superLinearReports(String.raw`\s*$`, '')).not.toEqual([]);
  });

  it('finds every pattern of the contract, the lead fields among them', () => {
    const paths = contractPatterns().map(([path]) => path);
    expect(paths.length).toBeGreaterThanOrEqual(25);
    expect(paths).toEqual(expect.arrayContaining(['/components/schemas/LeadInput/properties/telefone', '/components/schemas/LeadInput/properties/email']));
  });

  it.each(contractPatterns())('the contract pattern at %s', (_path, pattern) => {
    expect(superLinearReports(pattern, 'u')).toEqual([]);
  });

  it('finds the lead rules', () => {
    expect(leadRulePatterns.map(([name]) => name).sort()).toEqual([
      'CONSENT_INVISIBLE_CHARACTER',
      'CONSENT_MARK_RUN',
      'EMAIL_FORMAT',
      'FORBIDDEN_CHARACTER',
      'FORBIDDEN_MULTILINE_CHARACTER',
      'TELEFONE_FORMAT',
      'VISIBLE_CHARACTER',
    ]);
  });

  it.each(leadRulePatterns)('the lead rule %s', (_name, regex) => {
    expect(superLinearReports(regex.source, regex.flags)).toEqual([]);
  });

  it('the lint fails on that telefone pattern and on a quadratic move, in src/, cli/ and the form script', () => {
    const lint = (filePath: string, code: string): string[] => {
      try {
        execFileSync(process.execPath, ['node_modules/eslint/bin/eslint.js', '--format', 'json', '--stdin', '--stdin-filename', filePath], {
          input: code,
          encoding: 'utf8',
        });
        return [];
      } catch (error) {
        const [result] = JSON.parse((error as { stdout: string }).stdout) as { messages: { ruleId: string }[] }[];
        return [...new Set(result.messages.map((m) => m.ruleId))].sort();
      }
    };
    expect(lint('src/leads/fixture.ts', 'export const TELEFONE = /^\\s*[0-9+\\-(). ]*\\s*$/u;\n')).toEqual(['regexp/no-super-linear-backtracking']);
    expect(lint('cli/fixture.ts', "export const trim = (path: string) => path.replace(/\\/+$/, '');\n")).toEqual(['regexp/no-super-linear-move']);
    expect(lint('src/forms/leads-form.js', "window.name = window.name.replace(/\\/+$/, '');\n")).toEqual(['regexp/no-super-linear-move']);
    expect(lint('src/leads/fixture.ts', "export const trim = (path: string) => path.replace(/(?<!\\/)\\/+$/, '');\n")).toEqual([]);
  });
});
