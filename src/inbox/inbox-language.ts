import type { Request } from 'express';
import { InboxCookies } from './inbox-cookies.js';
import { isLanguage, Language, LANGUAGES } from './inbox-messages.js';

/** The person's choice (POST /inbox/language), else the browser's Accept-Language, else pt-BR. */
export function languageOf(req: Request, cookies: InboxCookies): Language {
  const chosen = cookies.read(req, 'inbox_lang');
  if (isLanguage(chosen)) return chosen;
  const accepted = req.acceptsLanguages('pt-BR', 'pt', 'en');
  if (typeof accepted === 'string' && accepted.toLowerCase().startsWith('en')) return 'en';
  return LANGUAGES[0];
}
