import { RegExpParser } from '@eslint-community/regexpp';
import { analyse } from 'scslre';

/**
 * Why a regular expression can take super-linear time, by the analysis eslint-plugin-regexp runs for
 * no-super-linear-backtracking and no-super-linear-move (scslre): one line per report, none when it is linear.
 * A rejecting suffix is assumed, as for a pattern whose use the linter cannot see (ajv's `pattern`).
 */
export function superLinearReports(source: string, flags = 'u'): string[] {
  const parser = new RegExpParser({ ecmaVersion: 2025 });
  const literal = { pattern: parser.parsePattern(source, 0, source.length, { unicode: flags.includes('u') }), flags: parser.parseFlags(flags) };
  return analyse(literal, { assumeRejectingSuffix: true }).reports.map(
    (report) =>
      `${report.type}${report.exponential ? ' (exponential)' : ''}: ${'quant' in report ? report.quant.raw : `${report.startQuant.raw} / ${report.endQuant.raw}`} on ${report.character.literal.source}+`,
  );
}
