import { CONTEXT_MEMBERS } from '../leads/lead-context.js';
import { COUNT_CAP } from './lead-pages.service.js';

type Translate = (key: string, params?: Readonly<Record<string, string | number>>) => string;

const LOCALES: Record<string, string> = { 'pt-BR': 'pt-BR', en: 'en-GB' };

/**
 * What the lead pages' templates call besides the words (`it.t`): dates on the team's clock, counts with the
 * language's digit grouping, links that keep the filters, refused parameters in words. All return text, which the
 * templates escape.
 */
export class LeadsFormat {
  private readonly dateTime: Intl.DateTimeFormat;
  private readonly number: Intl.NumberFormat;

  constructor(
    private readonly t: Translate,
    language: string,
    readonly timeZone: string,
  ) {
    this.dateTime = new Intl.DateTimeFormat(LOCALES[language] ?? language, { dateStyle: 'short', timeStyle: 'medium', timeZone });
    this.number = new Intl.NumberFormat(LOCALES[language] ?? language);
  }

  /** An instant (ISO 8601, or Unix milliseconds) on the team's clock, in the language's form. */
  at(instant: string | number): string {
    return this.dateTime.format(new Date(instant));
  }

  /** ISO 8601 of Unix milliseconds (a `<time datetime>`). */
  iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  /** A count: exact up to COUNT_CAP, "10.000+" past it (countUpTo answers cap + 1 for more). */
  amount(n: number): string {
    return n > COUNT_CAP ? `${this.number.format(COUNT_CAP)}+` : this.number.format(n);
  }

  /** "1 lead", "1.234 leads", "10.000+ leads". */
  leads(n: number): string {
    return n === 1 ? this.t('leads.count.one') : this.t('leads.count.other', { count: this.amount(n) });
  }

  /**
   * Text in pieces of at most `size` characters (graphemes), for a `<wbr>` between each: a heading holding a lead's
   * name (the sender's text, maybe one long word) then wraps at 375 px instead of making the page scroll sideways.
   */
  pieces(text: string, size = 16): string[] {
    const graphemes = [...GRAPHEMES.segment(text)].map((part) => part.segment);
    const out: string[] = [];
    for (let start = 0; start < graphemes.length; start += size) out.push(graphemes.slice(start, start + size).join(''));
    return out;
  }

  /** A path with these parameters, empty ones left out. */
  link(path: string, params: Readonly<Record<string, string | undefined>>): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
    const text = query.toString();
    return text ? `${path}?${text}` : path;
  }

  /** The attribution members a lead has, in the contract's order, with their labels. */
  context(context: Readonly<Record<string, string | undefined>>): { name: string; label: string; value: string }[] {
    return CONTEXT_MEMBERS.filter((name) => context[name] !== undefined).map((name) => ({ name, label: this.t(`context.${name}`), value: context[name]! }));
  }

  /** A refused parameter of the filters, as a sentence naming its field. */
  queryError(error: { parameter: string; code: string }): string {
    if (error.code === 'invalid_cursor') return this.t('error.invalid_cursor');
    const field = FIELDS.includes(error.parameter) ? this.t(`leads.${error.parameter}`) : error.parameter;
    return this.t(ERRORS.includes(error.code) ? `error.${error.code}` : 'error.other', { field });
  }
}

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const FIELDS = ['since', 'until', 'origem', 'channel', 'screening', 'q', 'format'];
const ERRORS = ['invalid_format', 'out_of_range', 'too_long', 'too_short'];
