import { InboxViews } from './inbox-views.js';
import { Language, LANGUAGES, translator } from './inbox-messages.js';
import { CORE_MESSAGES } from './messages/core.js';
import { SETTINGS_MESSAGES } from './messages/settings.js';

/** What a person typed, everywhere a person can type: each must come out escaped. */
const EVIL = '"><script>alert(1)</script><img src=x onerror=alert(2)>';
const ESCAPED = '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;';

const views = new InboxViews();
const page = (language: Language) => ({
  language,
  csrfToken: 'token-123',
  person: { kind: 'person', userId: 'u-1', role: 'admin', scopes: [] },
  path: '/inbox/settings',
  area: 'settings',
  nav: [],
  assets: { css: '/c', htmx: '/h', script: '/s' },
});
const common = (language: Language) => ({
  t: translator(language, CORE_MESSAGES, SETTINGS_MESSAGES),
  page: page(language),
  values: { email: EVIL, url: EVIL, description: EVIL, name: EVIL },
  posted: true,
  invalid: () => true,
  dateTime: (at: string | number | Date) => new Date(at).toISOString(),
  problem: {
    status: 422,
    errors: [
      { field: 'url', message: 'error.scheme_not_allowed' },
      { field: null, message: 'error.other' },
    ],
  },
  notice: 'webhooks.notice.replayed',
  noticeParams: { count: 2 },
});

const endpoint = {
  id: 'e-1',
  url: `https://x.example/${EVIL}`,
  events: ['lead.received'],
  description: EVIL,
  status: 'disabled',
  disabled_reason: EVIL,
  created_at: '2026-11-27T10:00:00Z',
};
const DATA: Record<string, object> = {
  settings: { sections: ['people', 'recipients', 'webhooks', 'clients'] },
  'settings-people': { people: [{ id: 'u-2', email: EVIL, role: 'marketer', createdAt: 0 }], roles: ['viewer', 'marketer', 'admin'] },
  'settings-recipients': {
    recipients: [{ id: 'r-1', email: EVIL, mode: 'immediate', language: 'en', include_personal_data: false, status: 'bouncing' }],
    next: 'abc',
  },
  'settings-webhooks': { endpoints: [endpoint], eventTypes: ['lead.received', 'lead.held', 'lead.erased', 'consent.revoked'], events: ['lead.held'] },
  'settings-webhook': {
    endpoint,
    deliveries: [
      {
        message_id: 'msg_0',
        event_type: 'lead.received',
        attempt: 2,
        attempted_at: '2026-11-27T10:00:00Z',
        outcome: 'failed',
        status_code: 500,
        error: EVIL,
        next_attempt_at: null,
      },
    ],
    next: null,
  },
  'settings-clients': {
    clients: [{ clientId: 'op_1', name: EVIL, scopes: ['leads:read'], createdAt: new Date(0), rotatedAt: new Date(0), revokedAt: null }],
    scopes: ['leads:read', 'leads:export'],
    checkedScopes: ['leads:read'],
  },
  'settings-secret': {
    heading: 'clients.secret.rotated',
    items: [{ id: 'client-secret', label: 'clients.secret.label', value: 's3cr3t' }],
    hint: 'clients.secret.rotated.hint',
    hintAt: 0,
    example: `curl ${EVIL}`,
    back: '/inbox/settings/clients',
  },
};

describe('settings views', () => {
  it.each(LANGUAGES.flatMap((language) => Object.keys(DATA).map((view) => [view, language] as const)))(
    '%s renders in %s with every message found, what a person typed escaped',
    (view, language) => {
      const html = views.render(view, { ...common(language), ...DATA[view] });
      expect(html).not.toContain('<script>');
      expect(html).not.toContain('<img');
      if (view !== 'settings') expect(html).toContain(ESCAPED);
      // Every form posts its CSRF token.
      expect(html.match(/<form /g)?.length ?? 0).toBe(html.match(/name="_csrf" value="token-123"/g)?.length ?? 0);
      // Every input a person fills has a label (by for=, or around it).
      for (const [, id] of html.matchAll(/<(?:input|select) id="([^"]+)"/g)) expect(html).toContain(`for="${id}"`);
    },
  );

  it('names each wrong field at the top, linking to it, in the page’s language', () => {
    const html = views.render('settings-webhooks', { ...common('en'), ...DATA['settings-webhooks'] });
    expect(html).toContain('<a href="#webhook-url">URL</a>: must start with https://.');
    expect(html).toContain('id="webhook-url"');
  });
});
