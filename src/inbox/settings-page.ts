import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { requestIdOf } from '../request/request-id.js';
import { InboxPages } from './inbox-pages.service.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { SETTINGS_MESSAGES, type SettingsMessageKey } from './messages/settings.js';
import type { Actor } from './settings-audit.js';
import { formProblem, type Form, type FormProblem } from './settings-forms.js';

/** What a settings page shows besides its rows: a notice after a redirect, or the problem of the form just posted. */
export interface PageState {
  notice?: SettingsMessageKey;
  noticeParams?: Record<string, string | number>;
  problem?: FormProblem;
  /** The posted form, to fill its inputs again after a problem. */
  values?: Form;
}

/** A page that shows a secret once: what it is, the values, what to know, where to go next. */
export interface SecretPage {
  heading: SettingsMessageKey;
  items: { id: string; label: SettingsMessageKey; value: string }[];
  /** A message whose `{until}` is hintAt, on the team's clock. */
  hint?: SettingsMessageKey;
  hintAt?: string | Date;
  /** A command to try the secret with. */
  example?: string;
  back: string;
}

const DATE_TIME: Intl.DateTimeFormatOptions = { dateStyle: 'short', timeStyle: 'short' };

/**
 * The settings pages' rendering over the shell's (InboxPages): their dictionary, dates on the team's clock, notices by
 * key (never text from the query), form problems, and the answer that shows a secret once.
 */
@Injectable()
export class SettingsPage {
  private readonly formats: Record<string, Intl.DateTimeFormat>;

  constructor(
    readonly pages: InboxPages,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.formats = {
      'pt-BR': new Intl.DateTimeFormat('pt-BR', { ...DATE_TIME, timeZone: config.timeZone }),
      en: new Intl.DateTimeFormat('en-GB', { ...DATE_TIME, timeZone: config.timeZone }),
    };
  }

  actor(req: Request, person: PersonPrincipal): Actor {
    return { userId: person.userId, requestId: requestIdOf(req) };
  }

  /** The notice a redirect asked for (`?notice=`), if it is one of this page's. */
  notice<K extends string>(req: Request, notices: Record<K, SettingsMessageKey>): Pick<PageState, 'notice' | 'noticeParams'> {
    const name = typeof req.query.notice === 'string' ? req.query.notice : '';
    const count = typeof req.query.count === 'string' && /^\d{1,6}$/.test(req.query.count) ? Number(req.query.count) : 0;
    return Object.hasOwn(notices, name) ? { notice: notices[name as K], noticeParams: { count } } : {};
  }

  render(req: Request, res: Response, view: string, title: SettingsMessageKey, data: object, state: PageState = {}): void {
    const format = this.formats[this.pages.language(req)];
    const values = state.values ?? new URLSearchParams();
    this.pages.render(
      req,
      res,
      view,
      {
        ...data,
        notice: state.notice,
        noticeParams: state.noticeParams,
        problem: state.problem,
        values: Object.fromEntries(values),
        posted: state.values !== undefined,
        invalid: (name: string) => state.problem?.errors.some((error) => error.field === name) ?? false,
        dateTime: (at: string | number | Date) => format.format(new Date(at)),
      },
      { title, messages: SETTINGS_MESSAGES, area: 'settings', status: state.problem?.status },
    );
  }

  /**
   * A secret's one showing: the answer to the POST that made it, never stored in a cache or shown again (the page after
   * it is a link, not a redirect that could be replayed).
   */
  secret(req: Request, res: Response, data: SecretPage): void {
    res.setHeader('Cache-Control', 'no-store');
    this.render(req, res, 'settings-secret', data.heading, data);
  }

  /**
   * Runs a form's action and gives its result; a refusal a form can show renders `page` again with it (and gives
   * undefined), any other goes to the error page.
   */
  async submit<T>(form: Form, action: () => Promise<T>, page: (state: PageState) => Promise<void>): Promise<T | undefined> {
    try {
      return await action();
    } catch (error) {
      const problem = formProblem(error);
      if (!problem) throw error;
      await page({ problem, values: form });
      return undefined;
    }
  }

  redirect(res: Response, path: string): void {
    this.pages.redirect(res, path);
  }
}
