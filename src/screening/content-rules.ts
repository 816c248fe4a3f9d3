import type { NormalisedLead } from '../leads/normalised-lead.js';

/**
 * The content rules: what a lead's own text says about it. Each looks only at the normalised fields (no DNS, no
 * lists), holds rather than rejects, and is written so that a real Brazilian lead passes: accents, apostrophes,
 * a company site and a profile in the message, a telephone with its country code.
 */

/** A company site and a profile are a real lead's; more than this is an advert. */
export const MAX_LINKS = 2;

/** The start of a link: a scheme (with its `www.`, one link, not two), a bare `www.` host, or a forum's `[url]` tag. */
const LINK = /https?:\/\/(?:www\.)?|\bwww\.|\[url\b/gi;

/** More than MAX_LINKS links in `mensagem`. */
export function tooManyLinks(lead: NormalisedLead): boolean {
  const mensagem = lead.mensagem;
  if (mensagem === undefined) return false;
  let links = 0;
  LINK.lastIndex = 0;
  while (LINK.exec(mensagem) !== null) if (++links > MAX_LINKS) return true;
  return false;
}

/**
 * A tag: `<`, a name, then a space, `/`, `>` or the end (`<b>`, `<img src=…`, `<svg/onload=…`), or `<!`, `</`, `<?`.
 * `Ana <ana@empresa.com.br>`, as a mail client writes a person, is not one.
 */
const TAG = /<(?:[a-z][a-z0-9-]*(?=[\s/>]|$)|[!/?])/i;
/** A link where a person's name belongs. A company's site is what people write beside its name, so `empresa` may hold one. */
const LINK_IN_NAME = /https?:\/\/|\bwww\./i;
/** Tags that make a page act (scripts, frames, links, forms) in a message; `<` before a space or a digit is prose. */
const MARKUP_IN_MESSAGE = /<\/?(?:script|iframe|a|img|style|object|embed|svg|form|link|meta)\b|\[url[=\]]/i;

/** `nome` holds a tag or a link, `empresa` a tag, or `mensagem` active HTML or a forum link tag. */
export function markup(lead: NormalisedLead): boolean {
  return (
    TAG.test(lead.nome) ||
    LINK_IN_NAME.test(lead.nome) ||
    (lead.empresa !== undefined && TAG.test(lead.empresa)) ||
    (lead.mensagem !== undefined && MARKUP_IN_MESSAGE.test(lead.mensagem))
  );
}

/**
 * A spreadsheet formula: `=` and a letter (`=HYPERLINK(…)`, `=cmd|…`), or `+`, `-` or `@` and a function call
 * (`@SUM(`). `+55 (11) …`, `-- Ana` and `=)` are not formulas.
 */
const FORMULA = /^(?:=\s*[a-z]|[+\-@][a-z][\w.]*\()/i;

/** A free-text field that would run as a formula if a person opened an export in a spreadsheet. */
export function spreadsheetFormula(lead: NormalisedLead): boolean {
  return [lead.nome, lead.empresa, lead.mensagem, lead.origem].some((text) => text !== undefined && FORMULA.test(text));
}
