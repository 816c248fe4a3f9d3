/**
 * The `q` search of the read API (docs/decisions/0037-lead-search.md): what a lead is found by, and what a query asks
 * for, folded alike in code so that SQLite and PostgreSQL compare the same plain words.
 *
 * Folding: NFD, combining marks removed, lower case ("João" → "joao"). Words: the runs of letters and digits of the
 * folded text; everything else (spaces, `@`, `.`, `-`) separates them, so "ana.souza@empresa.com.br" is the words ana
 * souza empresa com br.
 */

const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const WHITESPACE = /\s+/u;

/** The most code points `q` may hold. */
export const MAX_QUERY_LENGTH = 100;

/** Letters and digits, lower case, without accents. Marks are stripped again after lower-casing (İ → i + dot above). */
export function foldText(text: string): string {
  return text.normalize('NFD').replace(MARKS, '').toLowerCase().normalize('NFD').replace(MARKS, '');
}

function words(text: string): string[] {
  return foldText(text)
    .split(SEPARATORS)
    .filter((word) => word !== '');
}

/**
 * The stored `search_folded` of a lead: the words of its nome, e-mail and empresa, each after one space (" ana souza
 * ana souza empresa com br"), so that "the start of a word" is " word" on PostgreSQL as it is a token to FTS5.
 */
export function searchDocument(nome: string, email: string, empresa: string | null): string {
  return ' ' + [...words(nome), ...words(email), ...(empresa === null ? [] : words(empresa))].join(' ');
}

/**
 * What `q` asks for: one phrase per whitespace-separated term, each the term's words in order, the last one a prefix.
 * A lead matches when every phrase starts at the start of one of its words ("ana@empresa": the word ana, then a word
 * that starts with empresa). Empty when `q` holds no letter or digit.
 */
export function searchPhrases(q: string): string[][] {
  return q
    .split(WHITESPACE)
    .map(words)
    .filter((phrase) => phrase.length > 0);
}

/** The FTS5 query of the phrases: each a quoted phrase whose last token is a prefix, all required ("ana empresa"* AND …). */
export function ftsQuery(phrases: string[][]): string {
  // Words hold letters and digits only: nothing in them is FTS5 syntax.
  return phrases.map((phrase) => `"${phrase.join(' ')}"*`).join(' AND ');
}

/** The LIKE pattern of a phrase over search_folded (PostgreSQL; words hold no % or _). */
export function likePattern(phrase: string[]): string {
  return `% ${phrase.join(' ')}%`;
}

/** The tsquery of the phrases (PostgreSQL's built-in text search, without pg_trgm): `ana <-> empresa:* & souza:*`. */
export function tsQuery(phrases: string[][]): string {
  return phrases.map((phrase) => `(${phrase.map((word, i) => (i === phrase.length - 1 ? `${word}:*` : word)).join(' <-> ')})`).join(' & ');
}
