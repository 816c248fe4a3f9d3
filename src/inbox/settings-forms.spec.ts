import { validationFailed, AppError } from '../problem/app-error.js';
import { SETTINGS_MESSAGES } from './messages/settings.js';
import { clientFormProblem, formProblem, recipientCreateBody, webhookCreateBody } from './settings-forms.js';

/** A form as a browser posts it: a field once per value. */
const form = (fields: Record<string, string | string[]>) =>
  new URLSearchParams(Object.entries(fields).flatMap(([name, value]) => [value].flat().map((v): [string, string] => [name, v])));

describe('settings forms', () => {
  it('turns the webhook form into the API body, leaving an empty description out and keeping the checked events', () => {
    expect(webhookCreateBody(form({ _csrf: 't', url: 'https://crm.example/hook', description: ' ', events: ['lead.received', 'lead.held'] }))).toEqual({
      url: 'https://crm.example/hook',
      events: ['lead.received', 'lead.held'],
    });
    expect(webhookCreateBody(form({ url: 'https://crm.example/hook', description: 'CRM' }))).toEqual({
      url: 'https://crm.example/hook',
      events: [],
      description: 'CRM',
    });
  });

  it('turns the recipient form into the API body: an unchecked box is false', () => {
    expect(recipientCreateBody(form({ email: 'ana@empresa.com.br', mode: 'immediate', language: 'en', include_personal_data: 'true' }))).toEqual({
      email: 'ana@empresa.com.br',
      mode: 'immediate',
      language: 'en',
      include_personal_data: true,
    });
    expect(recipientCreateBody(form({ email: 'ana@empresa.com.br', mode: '' }))).toEqual({ email: 'ana@empresa.com.br', include_personal_data: false });
  });

  it("names the form's field and the dictionary's words for a validation problem, with the API's status", () => {
    const problem = formProblem(
      validationFailed([
        { pointer: '/url', code: 'scheme_not_allowed', detail: 'The URL must be https.' },
        { pointer: '/events/1', code: 'unknown_event', detail: '…' },
        { pointer: '', code: 'empty_patch', detail: '…' },
      ]),
    );
    expect(problem).toEqual({
      status: 422,
      errors: [
        { field: 'url', message: 'error.scheme_not_allowed' },
        { field: 'events', message: 'error.unknown_event' },
        { field: null, message: 'error.other' },
      ],
    });
    expect(formProblem(new AppError('notification_recipient_exists', 'exists'))).toEqual({
      status: 409,
      errors: [{ field: null, message: 'recipients.error.exists' }],
    });
    expect(formProblem(new AppError('webhook_not_found', 'gone'))).toBeUndefined();
    expect(formProblem(new Error('boom'))).toBeUndefined();
  });

  it('checks the client form by the rules clients:create applies, each field on its own', () => {
    expect(clientFormProblem(form({ name: 'CRM sync', scope: ['leads:read', 'leads:export'] }))).toBeUndefined();
    expect(clientFormProblem(form({ name: ' ', scope: [] }))?.errors).toEqual([
      { field: 'name', message: 'error.name.required' },
      { field: 'scope', message: 'error.scope.none' },
    ]);
    expect(clientFormProblem(form({ name: 'x'.repeat(201), scope: 'people:manage' }))?.errors).toEqual([
      { field: 'name', message: 'error.name.invalid' },
      { field: 'scope', message: 'error.scope.unknown' },
    ]);
    expect(clientFormProblem(form({ name: 'evil\u202Ename', scope: 'leads:read' }))?.errors).toEqual([{ field: 'name', message: 'error.name.invalid' }]);
  });

  it('has every word in pt-BR and in English', () => {
    expect(Object.keys(SETTINGS_MESSAGES['pt-BR']).sort()).toEqual(Object.keys(SETTINGS_MESSAGES.en).sort());
    for (const words of Object.values(SETTINGS_MESSAGES)) for (const text of Object.values(words as Record<string, string>)) expect(text.trim()).not.toBe('');
  });
});
