import { AppError } from '../problem/app-error.js';
import { parseRecipientCreate, parseRecipientPatch } from './notification-request.js';

function errorsOf(parse: () => unknown): [string, string][] {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return ((error as AppError).options.errors ?? []).map((e) => ['pointer' in e ? e.pointer : e.parameter, e.code]);
  }
  throw new Error('accepted');
}

describe('notification recipient bodies', () => {
  it('takes an address and a mode, with pt-BR and personal data by default; the domain lower-cased, the address folded', () => {
    expect(parseRecipientCreate({ email: '  Vendas@Example.COM ', mode: 'immediate' })).toEqual({
      email: 'Vendas@example.com',
      emailFolded: 'vendas@example.com',
      mode: 'immediate',
      language: 'pt-BR',
      includePersonalData: true,
    });
    expect(parseRecipientCreate({ email: 'a@example.com', mode: 'daily_digest', language: 'en', include_personal_data: false })).toMatchObject({
      language: 'en',
      includePersonalData: false,
    });
  });

  it('says what is wrong with each member', () => {
    expect(errorsOf(() => parseRecipientCreate({}))).toEqual([
      ['/email', 'required'],
      ['/mode', 'required'],
    ]);
    expect(errorsOf(() => parseRecipientCreate({ email: 'not an address', mode: 'weekly', language: 'fr', include_personal_data: 'yes', cc: 1 }))).toEqual([
      ['/cc', 'unknown_field'],
      ['/email', 'invalid_format'],
      ['/mode', 'invalid_value'],
      ['/language', 'invalid_value'],
      ['/include_personal_data', 'invalid_type'],
    ]);
    expect(errorsOf(() => parseRecipientCreate({ email: 'a\r\nBcc: x@example.com', mode: 'immediate' }))).toEqual([['/email', 'invalid_characters']]);
    expect(errorsOf(() => parseRecipientCreate({ email: 42, mode: 1 }))).toEqual([
      ['/email', 'invalid_type'],
      ['/mode', 'invalid_type'],
    ]);
  });

  it('changes only what a patch names, and refuses an empty one or the address', () => {
    expect(parseRecipientPatch({ include_personal_data: false })).toEqual({ mode: undefined, language: undefined, includePersonalData: false });
    expect(errorsOf(() => parseRecipientPatch({}))).toEqual([['', 'empty_patch']]);
    expect(errorsOf(() => parseRecipientPatch({ email: 'b@example.com' }))).toEqual([['/email', 'unknown_field']]);
  });
});
