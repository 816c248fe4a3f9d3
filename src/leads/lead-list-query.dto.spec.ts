import fc from 'fast-check';
import { contractSchema } from '../../test/support/contract.js';
import { createValidationPipe } from '../body/validation.pipe.js';
import { queryErrorsOf } from './lead-read-input.js';
import { LeadListQuery } from './lead-list-query.dto.js';

/**
 * The contract is the source of truth: the query DTO accepts exactly the `since` and `until` the contract's parameter
 * schemas accept (a date, or a date-time with a time zone), over hand-picked cases and generated ones near every rule.
 * One difference is left to the descriptions ("years 0001 to 9999"): an offset that moves a date-time of the first or
 * last day out of those years (`9999-12-31T23:59:59-00:01`), which no schema keyword can state.
 */
const pipe = createValidationPipe();
const bySchema = { since: contractSchema('/components/parameters/Since/schema'), until: contractSchema('/components/parameters/Until/schema') };

async function byDto(name: 'since' | 'until', value: string): Promise<boolean> {
  try {
    await pipe.transform({ [name]: value }, { type: 'query', metatype: LeadListQuery });
    return true;
  } catch (error) {
    if (!queryErrorsOf(error).length) throw error;
    return false;
  }
}

async function expectAgreement(value: string): Promise<void> {
  for (const name of ['since', 'until'] as const) {
    const contract = bySchema[name](value) as boolean;
    expect([name, value, await byDto(name, value)]).toEqual([name, value, contract]);
  }
}

describe('since and until: the DTO and the contract agree', () => {
  it.each([
    '2026-11-27',
    '2028-02-29',
    '2026-02-29',
    '2026-13-01',
    '2026-11-31',
    '0001-01-01',
    '0000-01-01',
    '0000-01-01T10:00:00Z',
    '9999-12-31',
    '2026-11-27T10:00:00Z',
    '2026-11-27t10:00:00z',
    '2026-11-27T10:00:00.123456-03:00',
    '2026-11-27T10:00:00',
    '2026-11-27 10:00:00Z',
    '2026-11-27T10:00Z',
    '2026-11-27T24:00:00Z',
    '2026-11-27T23:59:60Z',
    '2026-11-27T10:00:00+0300',
    '2026-11-27T10:00:00+03',
    '2026-11-27Z',
    '27/11/2026',
    '20261127',
    '2026-1-7',
    '+2026-11-27',
    ' 2026-11-27',
    '2026-11-27 ',
    'yesterday',
    '',
  ])('%j', (value) => expectAgreement(value));

  it('on generated dates and date-times', async () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const date = fc
      .tuple(
        fc.integer({ min: 1, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        two(13),
        two(32),
      )
      .map((parts) => parts.join('-'));
    const offset = fc.oneof(
      fc.constantFrom('Z', 'z', ''),
      fc.tuple(fc.constantFrom('+', '-'), two(25), two(60)).map(([sign, h, m]) => `${sign}${h}:${m}`),
    );
    const time = fc
      .tuple(two(24), two(60), two(60), fc.option(fc.stringMatching(/^\.\d{1,9}$/), { nil: '' }), offset)
      .map(([h, m, s, fraction, zone]) => `${h}:${m}:${s}${fraction}${zone}`);
    const text = fc.oneof(
      date,
      fc.tuple(date, fc.constantFrom('T', 't'), time).map((parts) => parts.join('')),
    );
    await fc.assert(
      fc.asyncProperty(text, (value) => expectAgreement(value)),
      { numRuns: 1000 },
    );
  });
});
