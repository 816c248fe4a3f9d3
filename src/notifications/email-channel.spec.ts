import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config/config.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import type { MailTemplates } from '../mail/mail-templates.js';
import { failureOf } from '../mail/mail-outcome.js';
import type { Mailer, MailResult, OutgoingMail } from '../mail/mailer.js';
import { SecretBox } from '../secrets/secret-box.js';
import { EmailChannel, EmailSubscriber, scrub } from './email-channel.js';
import { MailComposers } from './mail-composers.js';
import { ConfirmationComposer, LeadNotificationComposer, TestComposer } from './notification-composers.js';
import type { NotificationRecipient } from './notification-recipient.entity.js';
import type { NotificationRecipientsStore } from './notification-recipients.store.js';
import { RecipientLinks, tokenHash } from './recipient-links.js';

/** Templates that show exactly what they were given, so the test sees what reached them. */
const templates: MailTemplates = {
  confirmation: (language, mail) => ({ subject: `confirm ${language}`, text: mail.confirmUrl, html: `<p>${mail.confirmUrl}</p>` }),
  leadNotification: (language, mail) => ({ subject: `lead ${language}`, text: JSON.stringify(mail), html: '<p>lead</p>' }),
  digest: () => ({ subject: 'digest', text: '', html: '' }),
  test: (language, mail) => ({ subject: `test ${language}`, text: mail.unsubscribeUrl, html: '<p>test</p>' }),
  verification: () => ({ subject: 'verification', text: '', html: '' }),
  privacyCode: () => ({ subject: 'privacy', text: '', html: '' }),
  claimCode: () => ({ subject: 'claim', text: '', html: '' }),
};

const LEAD = {
  id: '019ac600-0000-7000-8000-000000000001',
  received_at: '2026-11-27T12:00:00.000Z',
  nome: 'Beatriz Lima',
  email: 'beatriz@example.com.br',
  telefone: '+55 11 98765-4321',
  telefone_e164: '+5511987654321',
  empresa: 'Lima & Cia',
  mensagem: 'Olá',
  origem: 'site',
  channel: 'api',
  registration_id: null,
  client_id: null,
  legal_bases: [],
  context: { utm_source: 'google' },
  screening: { verdict: 'accepted', reasons: [], decided_by: 'screening', decided_at: '2026-11-27T12:00:00.000Z' },
} as unknown as LeadView;

function recipient(overrides: Partial<NotificationRecipient> = {}): NotificationRecipient {
  return {
    id: '019ac5e2-7b10-7c3d-9e4f-5a6b7c8d9e0f',
    email: 'Vendas@example.com',
    emailFolded: 'vendas@example.com',
    mode: 'immediate',
    language: 'pt-BR',
    includePersonalData: true,
    status: 'confirmed',
    statusReason: null,
    confirmationTokenHash: null,
    confirmationExpiresAt: null,
    confirmedAt: 1,
    unsubscribedAt: null,
    permanentFailures: 0,
    failingSince: null,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

describe('EmailChannel', () => {
  const config = loadConfig({ PUBLIC_BASE_URL: 'https://leads.example.com', DATA_DIR: '/tmp/unused', MAIL_FROM: 'Leads <leads@mail.example.com>' });
  const links = new RecipientLinks(config, new SecretBox(randomBytes(32)));
  let sent: OutgoingMail[];
  let answer: MailResult;
  let failures: number;
  let channel: EmailChannel;

  beforeEach(() => {
    sent = [];
    answer = { kind: 'accepted', code: 250, response: '250 2.0.0 Ok' };
    failures = 0;
    const mailer: Mailer = { send: async (mail) => (sent.push(mail), answer), forgetLeads: async () => 0, destination: 'test' };
    const store = { permanentFailure: async () => ++failures } as unknown as NotificationRecipientsStore;
    const composers = new MailComposers();
    for (const composer of [new LeadNotificationComposer(config, templates), new ConfirmationComposer(templates, links), new TestComposer(templates)])
      composers.register(composer);
    channel = new EmailChannel(config, mailer, store, composers, links);
  });

  const subscriber = (r: NotificationRecipient): EmailSubscriber => ({ id: r.id, enabled: true, failingSince: null, recipient: r });
  const attempt = (eventType: string, data: unknown, r = recipient()) =>
    channel.attempt(
      {
        channel: 'email',
        messageId: 'msg_019ac600000070008000000000000001',
        subscriberId: r.id,
        attempts: 0,
        step: 0,
        createdAt: 0,
        leaseUntil: 0,
        eventType,
        payload: JSON.stringify({ type: eventType, data }),
      },
      subscriber(r),
    );

  it('sends a lead to a confirmed recipient with its headers: To, Reply-To, Message-ID of message and recipient, one-click unsubscribe', async () => {
    const outcome = await attempt('lead.received', LEAD);
    expect(outcome).toMatchObject({ kind: 'succeeded', statusCode: 250, error: null });
    expect(sent).toHaveLength(1);
    const unsubscribeUrl = links.unsubscribeUrl(recipient().id);
    expect(sent[0]).toMatchObject({
      to: 'Vendas@example.com',
      replyTo: 'beatriz@example.com.br',
      messageId: `msg_019ac600000070008000000000000001.${recipient().id}@mail.example.com`,
      leadIds: [LEAD.id],
      subject: 'lead pt-BR',
      headers: {
        'Auto-Submitted': 'auto-generated',
        'List-Unsubscribe': `<${unsubscribeUrl}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    });
    expect(JSON.parse(sent[0].text)).toMatchObject({ leadUrl: `https://leads.example.com/api/v1/leads/${LEAD.id}`, includePersonalData: true, lead: LEAD });
  });

  it('gives a recipient without personal data nothing of the person: no Reply-To, and the template never sees the fields', async () => {
    await attempt('lead.received', LEAD, recipient({ includePersonalData: false, language: 'en' }));
    expect(sent[0].replyTo).toBeUndefined();
    expect(sent[0].subject).toBe('lead en');
    for (const value of ['Beatriz', 'beatriz@', '98765', 'Lima & Cia', 'Olá', 'google']) expect(sent[0].text).not.toContain(value);
    expect(sent[0].text).toContain(LEAD.id);
  });

  it('sends no lead, queued before the change, to a recipient now on the daily digest', async () => {
    expect(await attempt('lead.received', LEAD, recipient({ mode: 'daily_digest' }))).toMatchObject({ kind: 'failed', error: 'recipient_not_immediate' });
    expect(sent).toHaveLength(0);
    expect(await attempt('notification.test', {}, recipient({ mode: 'daily_digest' }))).toMatchObject({ kind: 'succeeded' });
  });

  it('sends a pending recipient its live confirmation only, without one-click; nothing for a replaced token', async () => {
    const token = links.confirmationToken(recipient().id, 'n1');
    const pending = recipient({ status: 'pending', confirmationTokenHash: tokenHash(token) });
    expect(await attempt('lead.received', LEAD, pending)).toMatchObject({ kind: 'failed', error: 'recipient_not_confirmed' });
    expect(await attempt('notification.test', {}, pending)).toMatchObject({ kind: 'failed', error: 'recipient_not_confirmed' });
    expect(sent).toHaveLength(0);

    expect(await attempt('notification.confirmation', { recipient_id: pending.id, nonce: 'n1', expires_at: 2e12 }, pending)).toMatchObject({
      kind: 'succeeded',
    });
    expect(sent[0].text).toBe(links.confirmUrl(token));
    expect(sent[0].headers).toEqual({ 'Auto-Submitted': 'auto-generated', 'List-Unsubscribe': `<${links.unsubscribeUrl(pending.id)}>` });

    expect(await attempt('notification.confirmation', { recipient_id: pending.id, nonce: 'older', expires_at: 2e12 }, pending)).toMatchObject({
      kind: 'succeeded',
      error: 'nothing_to_send',
    });
    expect(await attempt('notification.confirmation', { recipient_id: pending.id, nonce: 'n1', expires_at: 2e12 })).toMatchObject({ error: 'nothing_to_send' });
    expect(sent).toHaveLength(1);
  });

  it('offers the mailto unsubscribe only when a mailbox is named', async () => {
    const withMailto = loadConfig({ PUBLIC_BASE_URL: 'https://leads.example.com', DATA_DIR: '/tmp/unused', MAIL_UNSUBSCRIBE_MAILTO: 'optout@example.com' });
    const mailer: Mailer = { send: async (mail) => (sent.push(mail), answer), forgetLeads: async () => 0, destination: 'test' };
    const composers = new MailComposers();
    composers.register(new TestComposer(templates));
    channel = new EmailChannel(withMailto, mailer, {} as NotificationRecipientsStore, composers, links);
    await attempt('notification.test', {});
    expect(sent[0].headers!['List-Unsubscribe']).toBe(`<${links.unsubscribeUrl(recipient().id)}>, <mailto:optout@example.com?subject=unsubscribe>`);
  });

  it('retries a 4xx, fails a 5xx, and the third 5xx in a row disables the address with the code, never the address', async () => {
    answer = { kind: 'transient', code: 451, response: '451 4.3.0 <Vendas@example.com> try later', error: '451 4.3.0 <Vendas@example.com> try later' };
    expect(await attempt('lead.received', LEAD)).toEqual({
      kind: 'retry',
      statusCode: 451,
      error: '451 4.3.0 <[address]> try later',
      latencyMs: expect.any(Number),
      responseBody: '451 4.3.0 <[address]> try later',
    });
    answer = { kind: 'permanent', code: 550, response: '550 5.1.1 <Vendas@example.com>: unknown', error: '550 5.1.1 <Vendas@example.com>: unknown' };
    expect(await attempt('lead.received', LEAD)).toMatchObject({ kind: 'failed', statusCode: 550 });
    expect(await attempt('lead.received', LEAD)).not.toHaveProperty('disable');
    const third = await attempt('lead.received', LEAD);
    expect(third).toMatchObject({ kind: 'failed', disable: '3 permanent failures in a row; the last: SMTP 550 5.1.1.' });
    expect(JSON.stringify(third)).not.toMatch(/vendas@/i);
  });

  it('fails a message the server refuses for its content without counting it against the address: a lead cannot make it bouncing', async () => {
    // Anyone's form submission writes the content; a relay's spam or policy filter refuses it at DATA.
    for (const response of ['554 5.7.1 Message rejected as spam', '550 5.7.0 Policy violation', '554 5.6.0 Bad content', '552 5.3.4 Message too big']) {
      answer = failureOf({ code: 'EMESSAGE', command: 'DATA', responseCode: Number(response.slice(0, 3)), response });
      expect(await attempt('lead.received', LEAD)).toMatchObject({ kind: 'failed', statusCode: Number(response.slice(0, 3)) });
    }
    expect(failures).toBe(0);
    // The mailbox refused, at DATA or RCPT TO: that is the address's.
    answer = failureOf({ code: 'EMESSAGE', command: 'DATA', responseCode: 552, response: '552 5.2.2 Mailbox full' });
    await attempt('lead.received', LEAD);
    answer = failureOf({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550, response: '550 5.7.1 Recipient rejected' });
    await attempt('lead.received', LEAD);
    expect(failures).toBe(2);
  });

  it('fails an event no composer writes, without sending', async () => {
    expect(await attempt('lead.unknown', {})).toMatchObject({ kind: 'failed', error: 'no_composer: lead.unknown' });
    expect(sent).toHaveLength(0);
  });

  it('scrubs every address from a reply, and bounds it', () => {
    expect(scrub('550 a@b.c, "x@y.z" (q@r.s);t@u.v')).toBe('550 [address], "[address]" ([address]);[address]');
    expect(scrub('x'.repeat(5000))).toHaveLength(500);
  });
});
