/**
 * The screening verdict every stored lead carries (docs/decisions/0033-screening.md): `accepted` leads reach people and
 * machines; `held` leads wait for a person; `spam` leads are kept, unseen, until SPAM_RETENTION_DAYS erases them.
 */
export const SCREENING_VERDICTS = ['accepted', 'held', 'spam'] as const;
export type ScreeningVerdict = (typeof SCREENING_VERDICTS)[number];

/** Who decided a verdict when no person did. A person's decision names their operator client instead. */
export const AUTOMATIC_DECISION = 'screening';

/**
 * Every reason code and the verdict it brings on its own; a lead's verdict is the worst of its reasons' (spam over
 * held over accepted), `accepted` when it has none. The contract lists the same codes (openapi/leads/schemas.yaml).
 */
export const SCREENING_REASONS = {
  captcha_missing: 'held',
  captcha_failed: 'spam',
  captcha_expired: 'held',
  captcha_unavailable: 'held',
  disposable_email: 'held',
  honeypot: 'spam',
  too_fast: 'held',
  form_token_invalid: 'held',
  too_many_links: 'held',
  markup: 'held',
  spreadsheet_formula: 'held',
  duplicate_burst: 'held',
} as const satisfies Record<string, Exclude<ScreeningVerdict, 'accepted'>>;
export type ScreeningReason = keyof typeof SCREENING_REASONS;

/** The verdict a set of reasons brings. */
export function verdictOf(reasons: readonly ScreeningReason[]): ScreeningVerdict {
  let verdict: ScreeningVerdict = 'accepted';
  for (const reason of reasons) {
    if (SCREENING_REASONS[reason] === 'spam') return 'spam';
    verdict = 'held';
  }
  return verdict;
}

/** As every read surface shows it. */
export interface ScreeningView {
  verdict: ScreeningVerdict;
  reasons: ScreeningReason[];
  /** `screening` for the automatic verdict, else the operator client that decided. */
  decided_by: string;
  decided_at: string;
}
