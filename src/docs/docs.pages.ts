import { DOC_FACTS } from './doc-facts.js';
import { PAGE_FILES } from './page-files.js';

/** A hand-written documentation page (src/docs/pages/<slug>.md). The errors catalog page is generated from the catalog instead. */
export interface DocPageSource {
  slug: string;
  title: string;
  summary: string;
  /** Markdown, its facts filled in; `{base_url}` is replaced by PUBLIC_BASE_URL when the page is built. */
  markdown: string;
}

const FRONT_MATTER_KEYS = ['slug', 'title', 'summary'] as const;

/**
 * A page file: a front matter block (`key: value` lines between two `---` lines; the value is the rest of the line, as
 * written, colons included), then the page's Markdown.
 */
export function parsePageFile(name: string, text: string): DocPageSource {
  const block = /^---\n([\s\S]*?)\n---\n/.exec(text.replaceAll('\r\n', '\n'));
  if (!block) throw new Error(`${name}: the file must open with its front matter, "key: value" lines between two "---" lines`);
  const fields: Partial<Record<(typeof FRONT_MATTER_KEYS)[number], string>> = {};
  for (const line of block[1].split('\n')) {
    const [, key, value] = /^([a-z_]+):(.*)$/.exec(line) ?? [];
    if (!FRONT_MATTER_KEYS.includes(key as never)) throw new Error(`${name}: front matter line "${line}": the keys are ${FRONT_MATTER_KEYS.join(', ')}`);
    if (fields[key as keyof typeof fields] !== undefined) throw new Error(`${name}: front matter names ${key} twice`);
    fields[key as keyof typeof fields] = value.trim();
  }
  const missing = FRONT_MATTER_KEYS.filter((key) => !fields[key]);
  if (missing.length > 0) throw new Error(`${name}: front matter lacks ${missing.join(', ')}`);
  if (name !== `${fields.slug}.md`) throw new Error(`${name}: the file of the page "${fields.slug}" is named ${fields.slug}.md`);
  return { slug: fields.slug!, title: fields.title!, summary: fields.summary!, markdown: text.replaceAll('\r\n', '\n').slice(block[0].length) };
}

/**
 * The pages with their `{{NAME}}` placeholders filled from `facts`. A name that is no fact, or a fact no page uses, is an
 * error: the start (and `npm run build`, which loads this module) stops with it.
 */
export function loadPages(files: Readonly<Record<string, string>>, facts: Readonly<Record<string, string>>): DocPageSource[] {
  const used = new Set<string>();
  const pages = Object.entries(files).map(([name, text]) => {
    const page = parsePageFile(name, text);
    const markdown = page.markdown.replace(/\{\{([^{}]*)\}\}/g, (placeholder, fact: string) => {
      if (!Object.hasOwn(facts, fact))
        throw new Error(`${name}: unknown placeholder ${placeholder}; the facts are ${Object.keys(facts).join(', ')} (src/docs/doc-facts.ts)`);
      used.add(fact);
      return facts[fact];
    });
    return { ...page, markdown };
  });
  if (pages.length === 0) throw new Error('there are no docs pages (src/docs/pages/*.md)');
  const unused = Object.keys(facts).filter((fact) => !used.has(fact));
  if (unused.length > 0) throw new Error(`no docs page uses ${unused.join(', ')}: quote it in src/docs/pages or drop it from src/docs/doc-facts.ts`);
  return pages;
}

export const DOC_PAGES: readonly DocPageSource[] = loadPages(PAGE_FILES, DOC_FACTS);
