import { OPERATOR_SCOPES } from '../auth/scopes.js';
import { clientNameOf, OperatorClientError, operatorScopes } from '../oauth/operator-clients.service.js';
import { AppError } from '../problem/app-error.js';
import { ERROR_CATALOG, type FieldError } from '../problem/error-catalog.js';
import { SETTINGS_MESSAGES, type SettingsMessageKey } from './messages/settings.js';

/** An inbox form as the shell hands it over (@InboxForm()): a field may repeat, once per checked box. */
export type Form = URLSearchParams;

/** What a settings form says went wrong: one line per field (translated by the page), or one about the whole form. */
export interface FormProblem {
  status: number;
  /** `field` names the form's input (null: the whole form); the message is a dictionary key. */
  errors: { field: string | null; message: SettingsMessageKey }[];
}

/** The first value of a field, or undefined. */
export function field(form: Form, name: string): string | undefined {
  return form.get(name) ?? undefined;
}

/** Every value of a field posted once per checked box. */
export function fields(form: Form, name: string): string[] {
  return form.getAll(name);
}

/** An optional text input: empty means absent, as the API's bodies leave the member out. */
function optional(form: Form, name: string): string | undefined {
  const value = field(form, name);
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** The body POST /api/v1/webhooks takes, from the create form (the events are its checked boxes; none is an error of the API's). */
export function webhookCreateBody(form: Form): Record<string, unknown> {
  const description = optional(form, 'description');
  return { url: field(form, 'url') ?? '', events: fields(form, 'events'), ...(description === undefined ? {} : { description }) };
}

/** The body POST /api/v1/notification-recipients takes: a checkbox posts `include_personal_data=true` or nothing. */
export function recipientCreateBody(form: Form): Record<string, unknown> {
  const body: Record<string, unknown> = {
    email: field(form, 'email') ?? '',
    include_personal_data: field(form, 'include_personal_data') === 'true',
  };
  for (const name of ['mode', 'language']) {
    const value = optional(form, name);
    if (value !== undefined) body[name] = value;
  }
  return body;
}

/** `clients:create`'s two arguments: the name, and the checked scopes as one space-separated string. */
export function clientCreateArguments(form: Form): { name: string; scope: string } {
  return { name: field(form, 'name') ?? '', scope: fields(form, 'scope').join(' ') };
}

/** The scopes a client may be made with, in the order the form lists them. */
export const CLIENT_SCOPES = OPERATOR_SCOPES;

const FIELD_MESSAGES: Partial<Record<FieldError['code'], SettingsMessageKey>> = {
  required: 'error.required',
  invalid_type: 'error.invalid_type',
  too_short: 'error.too_short',
  too_long: 'error.too_long',
  invalid_format: 'error.invalid_format',
  invalid_characters: 'error.invalid_characters',
  invalid_value: 'error.invalid_value',
  duplicate: 'error.duplicate',
  too_many_items: 'error.too_many_items',
  invalid_url: 'error.invalid_url',
  scheme_not_allowed: 'error.scheme_not_allowed',
  credentials_not_allowed: 'error.credentials_not_allowed',
  address_not_allowed: 'error.address_not_allowed',
  unresolvable_host: 'error.unresolvable_host',
  unknown_event: 'error.unknown_event',
};

/** Refusals of the services a form can meet, as the page words them; the status is the API's for the same code. */
const CODE_MESSAGES: Partial<Record<AppError['code'], SettingsMessageKey>> = {
  notification_recipient_exists: 'recipients.error.exists',
  notification_recipient_confirmed: 'recipients.error.confirmed',
  confirmation_rate_limited: 'recipients.error.rate_limited',
  webhook_limit_reached: 'webhooks.error.limit',
};

/**
 * A service's refusal as a form problem, with the API's status for the same code; undefined when it is not one a form
 * shows (then the shell's error page answers, as for a 404). validation_failed's pointers name the API body's members,
 * which are the form's fields.
 */
export function formProblem(error: unknown): FormProblem | undefined {
  if (!(error instanceof AppError)) return undefined;
  const status = ERROR_CATALOG[error.code].status;
  if (error.code === 'validation_failed') {
    const errors = (error.options.errors ?? []).map((entry) => {
      const name = ('pointer' in entry ? entry.pointer : '').split('/')[1] ?? '';
      return {
        field: Object.hasOwn(SETTINGS_MESSAGES.en, `form.field.${name}`) ? name : null,
        message: FIELD_MESSAGES[entry.code as FieldError['code']] ?? ('error.other' as const),
      };
    });
    return { status, errors };
  }
  const message = CODE_MESSAGES[error.code];
  return message ? { status, errors: [{ field: null, message }] } : undefined;
}

/**
 * The client form checked by the rules `clients:create` applies (OperatorClients.create applies them again), each
 * field on its own so that the page can mark both.
 */
export function clientFormProblem(form: Form): FormProblem | undefined {
  const { name, scope } = clientCreateArguments(form);
  const errors: FormProblem['errors'] = [];
  if (refuses(() => clientNameOf(name))) errors.push({ field: 'name', message: name.trim() ? 'error.name.invalid' : 'error.name.required' });
  if (refuses(() => operatorScopes(scope))) errors.push({ field: 'scope', message: scope ? 'error.scope.unknown' : 'error.scope.none' });
  return errors.length ? { status: 422, errors } : undefined;
}

function refuses(check: () => unknown): boolean {
  try {
    check();
    return false;
  } catch (error) {
    if (error instanceof OperatorClientError) return true;
    throw error;
  }
}
