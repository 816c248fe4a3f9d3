import { CONTEXT_MEMBERS } from '../leads/lead-context.js';
import { COUNT_CAP } from './lead-pages.service.js';
import { LEADS_MESSAGES } from './messages/leads.js';

export type LeadsLanguage = keyof typeof LEADS_MESSAGES;
export type LeadsMessage = keyof (typeof LEADS_MESSAGES)['pt-BR'];

const LOCALES: Record<LeadsLanguage, string> = { 'pt-BR': 'pt-BR', en: 'en-GB' };

/**
 * What the lead pages' templates call: the words in the page's language with values filled in, dates on the team's
 * clock, counts with the language's digit grouping, and links that keep the filters. Values are returned as text; the
 * templates escape them (`<%= %>`).
 */
export class LeadsWording {
  private readonly words: Record<string, string>;
  private readonly dateTime: Intl.DateTimeFormat;
  private readonly number: Intl.NumberFormat;

  constructor(
    readonly language: LeadsLanguage,
    readonly timeZone: string,
  ) {
    this.words = LEADS_MESSAGES[language];
    this.dateTime = new Intl.DateTimeFormat(LOCALES[language], { dateStyle: 'short', timeStyle: 'medium', timeZone });
    this.number = new Intl.NumberFormat(LOCALES[language]);
  }

  /** The message `key` with `{name}` replaced by each value (numbers grouped); an unknown key is itself (a test catches it). */
  t(key: string, values: Record<string, string | number> = {}): string {
    const text = this.words[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
      const value = values[name];
      if (value === undefined) return whole;
      return typeof value === 'number' ? this.number.format(value) : value;
    });
  }

  /** An instant (ISO 8601) on the team's clock, in the language's form. */
  at(iso: string | number | null): string {
    return iso === null ? '' : this.dateTime.format(new Date(iso));
  }

  /** "1.234 leads", or "10.000+ leads" past the cap (countUpTo answers cap + 1 for more). */
  count(n: number): string {
    if (n > COUNT_CAP) return this.t('leads.count.capped', { count: `${this.number.format(COUNT_CAP)}+` });
    return n === 1 ? this.t('leads.count.one') : this.t('leads.count.other', { count: n });
  }

  /** A count alone: "10.000+" past the cap. */
  amount(n: number): string {
    return n > COUNT_CAP ? `${this.number.format(COUNT_CAP)}+` : this.number.format(n);
  }

  /** A path with these parameters, empty ones left out. */
  link(path: string, params: Record<string, string | undefined>): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
    const text = query.toString();
    return text ? `${path}?${text}` : path;
  }

  /** The attribution members a lead has, in the contract's order, with their labels. */
  context(context: Record<string, string | undefined>): { name: string; label: string; value: string }[] {
    return CONTEXT_MEMBERS.filter((name) => context[name] !== undefined).map((name) => ({ name, label: this.t(`context.${name}`), value: context[name]! }));
  }

  /** The label of a refused parameter, in the page's words. */
  parameter(name: string): string {
    const key = name === 'q' ? 'leads.search' : `leads.${name}`;
    return this.words[key] ?? name;
  }

  /** A refused parameter as a sentence. */
  queryError(error: { parameter: string; code: string }): string {
    if (error.code === 'invalid_cursor') return this.t('error.invalid_cursor');
    const key = `error.${error.code}`;
    return this.t(this.words[key] ? key : 'error.other', { field: this.parameter(error.parameter) });
  }
}
