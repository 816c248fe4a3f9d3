import { foldText, ftsQuery, likePattern, searchDocument, searchPhrases, tsQuery } from './lead-search.js';

describe('lead search folding', () => {
  it('folds accents and letter case, in composed and decomposed text alike', () => {
    expect(foldText('João')).toBe('joao');
    expect(foldText('JOÃO')).toBe('joao');
    expect(foldText('Joa\u0303o')).toBe('joao');
    expect(foldText('Gonçalves Müller İzmir')).toBe('goncalves muller izmir');
    // Letters without a decomposition stay.
    expect(foldText('Øster Łódź')).toBe('øster łodz');
  });

  it('stores the words of nome, e-mail and empresa, each after one space', () => {
    expect(searchDocument('João  Silva', 'Joao.Silva@Padaria.com.br', 'Padaria São Jorge')).toBe(' joao silva joao silva padaria com br padaria sao jorge');
    expect(searchDocument('Ana', 'ana@x.io', null)).toBe(' ana ana x io');
  });

  it('reads q as phrases: one per whitespace-separated term, punctuation splitting words inside it', () => {
    expect(searchPhrases('  JOÃO   ana@Empresa ')).toEqual([['joao'], ['ana', 'empresa']]);
    expect(searchPhrases('@@ - .')).toEqual([]);
  });

  it('writes each phrase for FTS5, LIKE and PostgreSQL text search with its last word a prefix', () => {
    const phrases = [['ana', 'empresa'], ['silva']];
    expect(ftsQuery(phrases)).toBe('"ana empresa"* AND "silva"*');
    expect(phrases.map(likePattern)).toEqual(['% ana empresa%', '% silva%']);
    expect(tsQuery(phrases)).toBe('(ana <-> empresa:*) & (silva:*)');
  });
});
