/** The inbox's languages; the first is the one a browser that asks for neither gets. */
export const LANGUAGES = ['pt-BR', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

export type Dictionary = Readonly<Record<string, string>>;
/** One area's messages (src/inbox/messages/<area>.ts): the same keys in every language. */
export type Messages = Readonly<Record<Language, Dictionary>>;
/** A message by key, with `{name}` placeholders filled in; the templates escape what it returns. */
export type Translate = (key: string, params?: Readonly<Record<string, string | number>>) => string;

/** Declares an area's messages, refusing at load (so at build and boot) a key missing from a language. */
export function defineMessages<K extends string>(messages: Readonly<Record<Language, Readonly<Record<K, string>>>>): Messages {
  const keys = (language: Language) => Object.keys(messages[language]).sort().join();
  for (const language of LANGUAGES) {
    if (keys(language) !== keys(LANGUAGES[0])) throw new Error(`inbox messages: ${language} has not the same keys as ${LANGUAGES[0]}`);
  }
  return messages;
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** A translator over the core messages and a page's own; an unknown key throws, so that a test of the page finds it. */
export function translator(language: Language, ...areas: Messages[]): Translate {
  const dictionary: Record<string, string> = Object.assign({}, ...areas.map((area) => area[language]));
  return (key, params) => {
    const message = dictionary[key];
    if (message === undefined) throw new Error(`inbox message ${key} is missing`);
    return params ? message.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole)) : message;
  };
}
