import { readdirSync } from 'node:fs';
import { DOC_FACTS } from './doc-facts.js';
import { DOC_PAGES, loadPages, parsePageFile } from './docs.pages.js';
import { PAGE_FILES, PAGES_FOLDER } from './page-files.js';

const page = (slug: string, body: string, extra = '') =>
  `---\nslug: ${slug}\ntitle: The ${slug} page\nsummary: About ${slug}: all of it.\n${extra}---\n${body}`;

describe('the docs pages (src/docs/pages/*.md)', () => {
  it('are every Markdown file of the folder, each a page named by its file, its facts filled in', () => {
    const files = readdirSync(PAGES_FOLDER).filter((name) => name.endsWith('.md'));
    expect(DOC_PAGES.map((p) => `${p.slug}.md`)).toEqual(files.sort());
    expect(Object.keys(PAGE_FILES)).toEqual(files);
    for (const { slug, title, summary, markdown } of DOC_PAGES) {
      expect([slug, title.length > 0, summary.length > 0, markdown.startsWith('# ')]).toEqual([slug, true, true, true]);
      expect([slug, markdown.includes('{{')]).toEqual([slug, false]);
    }
  });

  it('quote every fact of the placeholder list', () => {
    const text = DOC_PAGES.map((p) => p.markdown).join('\n');
    for (const value of Object.values(DOC_FACTS)) expect(text).toContain(value);
  });
});

describe('loadPages', () => {
  const facts = { BODY_LIMIT: '64 KiB', TOKEN_LIFETIME: '15 minutes' };

  it('fills each {{NAME}} with its fact, as often as it appears', () => {
    const [loaded] = loadPages({ 'limits.md': page('limits', '# Limits\n\n{{BODY_LIMIT}}, {{TOKEN_LIFETIME}}, {{BODY_LIMIT}}.\n') }, facts);
    expect(loaded).toEqual({
      slug: 'limits',
      title: 'The limits page',
      summary: 'About limits: all of it.',
      markdown: '# Limits\n\n64 KiB, 15 minutes, 64 KiB.\n',
    });
  });

  it('refuses a placeholder that names no fact, naming it and the file', () => {
    const files = { 'a.md': page('a', '{{BODY_LIMIT}} {{TOKEN_LIFETIME}}'), 'b.md': page('b', 'at most {{BODY_LIMT}}') };
    expect(() => loadPages(files, facts)).toThrow('b.md: unknown placeholder {{BODY_LIMT}}; the facts are BODY_LIMIT, TOKEN_LIFETIME');
  });

  it('refuses a fact that no page uses', () => {
    expect(() => loadPages({ 'a.md': page('a', '{{BODY_LIMIT}}') }, facts)).toThrow('no docs page uses TOKEN_LIFETIME');
  });

  it('refuses an empty folder', () => {
    expect(() => loadPages({}, {})).toThrow('there are no docs pages');
  });
});

describe('parsePageFile: the front matter', () => {
  it('takes the rest of the line as the value, colons included, and CRLF line ends', () => {
    expect(parsePageFile('a.md', page('a', '# A\n').replaceAll('\n', '\r\n'))).toEqual({
      slug: 'a',
      title: 'The a page',
      summary: 'About a: all of it.',
      markdown: '# A\n',
    });
  });

  it.each([
    ['no front matter', '# A\n', 'a.md: the file must open with its front matter'],
    ['an unclosed block', '---\nslug: a\n# A\n', 'a.md: the file must open with its front matter'],
    ['an unknown key', page('a', '', 'order: 1\n'), 'a.md: front matter line "order: 1": the keys are slug, title, summary'],
    ['a line that is no key: value', page('a', '', 'just text\n'), 'a.md: front matter line "just text"'],
    ['a key twice', page('a', '', 'title: Again\n'), 'a.md: front matter names title twice'],
    ['a missing key', '---\nslug: a\ntitle: A\n---\n', 'a.md: front matter lacks summary'],
    ['an empty value', '---\nslug: a\ntitle:\nsummary: S\n---\n', 'a.md: front matter lacks title'],
    ['a slug other than the file name', page('b', ''), 'a.md: the file of the page "b" is named b.md'],
  ])('refuses %s', (_case, text, message) => {
    expect(() => parsePageFile('a.md', text)).toThrow(message);
  });
});
