import { Injectable } from '@nestjs/common';

/** What a lead's `Form-Token` header proves: a genuine unspent token issued ≥ 3 s ago, one issued too recently, or nothing. */
export type FormTokenCheck = 'valid' | 'too_fast' | 'invalid';

/**
 * Signed, single-use form tokens (issue 33): GET /forms/token issues one when a form is shown; a lead spends it.
 * FOUNDATION STUB: the forms work of issue 33 replaces both bodies.
 */
@Injectable()
export class FormTokens {
  issue(): Promise<{ token: string; expires_at: string }> {
    throw new Error('FormTokens.issue is not built yet');
  }

  /** Spends `token` (once, across instances) and says what it proves. */
  redeem(_token: string): Promise<FormTokenCheck> {
    throw new Error('FormTokens.redeem is not built yet');
  }
}
