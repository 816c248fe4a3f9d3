import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../../test/support/database.js';
import { storedLead } from '../../../test/support/stored-leads.js';
import { AppConfig, loadConfig } from '../../config/config.js';
import { dataSourceOptions, runMigrations } from '../../database/data-source.js';
import { StepTransactions } from '../../database/step-transaction.js';
import { uuidv7 } from '../../database/uuid-v7.js';
import { ConsentText } from '../../leads/consent-text.entity.js';
import { Lead } from '../../leads/lead.entity.js';
import { LeadReader } from '../../leads/lead-reader.service.js';
import type { DigestMail, MailTemplates } from '../../mail/mail-templates.js';
import type { Outbox } from '../../outbox/outbox.service.js';
import { OutboxStore } from '../../outbox/outbox-store.js';
import { MailComposers } from '../mail-composers.js';
import type { NotificationRecipient } from '../notification-recipient.entity.js';
import { NotificationRecipientsStore } from '../notification-recipients.store.js';
import { digestDayAt } from './digest-day.js';
import { NotificationDigestComposer } from './notification-digest.composer.js';
import { DIGEST_TICK_MS, NotificationDigestScheduler } from './notification-digest.scheduler.js';
import { NotificationDigestStore } from './notification-digest.store.js';

/**
 * @database
 * The daily digest's schedule and composer against a real database. Time is passed in (`tick(now)`), never waited for.
 */

const at = (iso: string) => Date.parse(iso);

describe('the digest day', () => {
  const eight = { hour: 8, minute: 0 };

  it('is yesterday on the São Paulo clock (UTC−3 all year since 2019), due at 08:00 there', () => {
    expect(digestDayAt(at('2026-03-10T10:59:00Z'), 'America/Sao_Paulo', eight)).toEqual({
      day: '2026-03-09',
      since: new Date('2026-03-09T03:00:00Z'),
      until: new Date('2026-03-10T03:00:00Z'),
      dueAt: at('2026-03-10T11:00:00Z'),
    });
  });

  it('turns at local midnight, not at UTC midnight', () => {
    // 23:30 on the 9th in São Paulo is already the 10th in UTC.
    expect(digestDayAt(at('2026-03-10T02:30:00Z'), 'America/Sao_Paulo', eight).day).toBe('2026-03-08');
    expect(digestDayAt(at('2026-03-10T03:00:00Z'), 'America/Sao_Paulo', eight).day).toBe('2026-03-09');
    expect(digestDayAt(at('2026-03-10T02:30:00Z'), 'UTC', eight).day).toBe('2026-03-09');
  });

  it('is due at the configured time', () => {
    expect(digestDayAt(at('2026-03-10T12:00:00Z'), 'America/Sao_Paulo', { hour: 21, minute: 30 }).dueAt).toBe(at('2026-03-11T00:30:00Z'));
    expect(digestDayAt(at('2026-01-01T12:00:00Z'), 'Asia/Kolkata', { hour: 0, minute: 15 })).toMatchObject({
      day: '2025-12-31',
      dueAt: at('2025-12-31T18:45:00Z'),
    });
  });

  it('covers a 23-hour day where the clocks spring forward', () => {
    expect(digestDayAt(at('2026-03-09T15:00:00Z'), 'America/New_York', eight)).toEqual({
      day: '2026-03-08',
      since: new Date('2026-03-08T05:00:00Z'),
      until: new Date('2026-03-09T04:00:00Z'),
      dueAt: at('2026-03-09T12:00:00Z'),
    });
  });
});

describe('the digest timer', () => {
  afterEach(() => jest.useRealTimers());

  it('looks at the clock at start and once a minute, and stops on shutdown', async () => {
    jest.useFakeTimers();
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const scheduler = new NotificationDigestScheduler(config, {} as NotificationDigestStore, {} as Outbox, {} as LeadReader, {} as NotificationRecipientsStore);
    const ticks = jest.spyOn(scheduler, 'tick').mockResolvedValue(0);
    scheduler.onApplicationBootstrap();
    expect(ticks).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(DIGEST_TICK_MS * 3);
    expect(ticks).toHaveBeenCalledTimes(4);
    await scheduler.onModuleDestroy();
    jest.advanceTimersByTime(DIGEST_TICK_MS * 3);
    expect(ticks).toHaveBeenCalledTimes(4);
  });
});

const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('the daily digest on %s', (kind) => {
  let database: TestDatabase;
  let config: AppConfig;
  const dataSources: DataSource[] = [];
  let sql: StepTransactions;
  let reader: LeadReader;
  const p = (n: number) => (kind === 'postgres' ? `$${n}` : '?');
  // São Paulo, 2026-03-10: the digest about the 9th is due at 11:00 UTC.
  const DUE = at('2026-03-10T11:00:00Z');
  const NINTH = at('2026-03-09T15:00:00Z');

  async function connect(): Promise<DataSource> {
    const options = dataSourceOptions(config);
    const dataSource = await new DataSource({ ...options, entities: [Lead, ConsentText] } as typeof options).initialize();
    dataSources.push(dataSource);
    return dataSource;
  }

  /** An instance's scheduler: its own connection, store and outbox producer (the real store's publish). */
  async function scheduler(): Promise<NotificationDigestScheduler> {
    const dataSource = await connect();
    const outboxStore = new OutboxStore(dataSource);
    const outbox = { publish: outboxStore.publish.bind(outboxStore), wake: () => undefined } as unknown as Outbox;
    return new NotificationDigestScheduler(
      config,
      new NotificationDigestStore(dataSource),
      outbox,
      new LeadReader(dataSource),
      new NotificationRecipientsStore(dataSource),
    );
  }

  beforeAll(async () => {
    Logger.overrideLogger(false);
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env, TIME_ZONE: 'America/Sao_Paulo', PUBLIC_BASE_URL: 'https://leads.example.com' });
    const dataSource = await connect();
    await runMigrations(dataSource);
    sql = new StepTransactions(dataSource);
    reader = new LeadReader(dataSource);
  });
  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    for (const table of ['webhook_deliveries', 'webhook_messages', 'notification_digests', 'notification_recipients', 'leads'])
      await sql.query(`DELETE FROM ${table}`);
  });

  async function recipient(fields: { mode?: string; status?: string; language?: string; includePersonalData?: boolean } = {}): Promise<string> {
    const id = uuidv7();
    const email = `${id}@team.example`;
    await sql.query(
      `INSERT INTO notification_recipients (id, email, email_folded, mode, language, include_personal_data, status, created_at, updated_at) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(p).join(', ')})`,
      [id, email, email, fields.mode ?? 'daily_digest', fields.language ?? 'pt-BR', fields.includePersonalData ?? true, fields.status ?? 'confirmed', 0, 0],
    );
    return id;
  }

  async function leads(count: number, fields: Partial<Lead> = {}): Promise<Lead[]> {
    const rows = Array.from({ length: count }, (_, i) => storedLead(i, { receivedAt: new Date(NINTH + i * 1000), ...fields }));
    const dataSource = dataSources[0];
    for (let start = 0; start < rows.length; start += 100) await dataSource.getRepository(Lead).insert(rows.slice(start, start + 100));
    return rows;
  }

  async function digests(): Promise<{ recipient: string; data: unknown }[]> {
    const rows = await sql.query(`SELECT endpoint_id, payload FROM webhook_messages WHERE event_type = 'notification.digest' ORDER BY endpoint_id`);
    return rows.map((row) => ({ recipient: row.endpoint_id as string, data: (JSON.parse(row.payload as string) as { data: unknown }).data }));
  }

  it('writes one digest per confirmed daily-digest recipient at the configured time, about the previous local day, without personal data', async () => {
    const wanted = [await recipient(), await recipient({ language: 'en', includePersonalData: false })].sort();
    await recipient({ mode: 'immediate' });
    await recipient({ status: 'pending' });
    await recipient({ status: 'unsubscribed' });
    await leads(2);
    const digest = await scheduler();

    expect(await digest.tick(DUE - 60_000)).toBe(0);
    expect(await digests()).toEqual([]);
    expect(await digest.tick(DUE)).toBe(2);
    const data = { day: '2026-03-09', since: '2026-03-09T03:00:00.000Z', until: '2026-03-10T03:00:00.000Z' };
    expect(await digests()).toEqual(wanted.map((id) => ({ recipient: id, data })));
    // Later ticks that day, and a restart that day, write nothing more.
    expect(await digest.tick(DUE + 3_600_000)).toBe(0);
    expect(await (await scheduler()).tick(DUE + 7_200_000)).toBe(0);
    expect(await digests()).toHaveLength(2);
  });

  it('writes nothing on a day with nothing to say, and a digest when leads await review only', async () => {
    await recipient();
    await leads(1, { receivedAt: new Date(NINTH - 86_400_000) });
    await leads(1, { receivedAt: new Date(at('2026-03-10T03:00:00Z')) });
    expect(await (await scheduler()).tick(DUE)).toBe(0);
    expect(await digests()).toEqual([]);

    await leads(1, { screeningVerdict: 'held', receivedAt: new Date(NINTH - 5 * 86_400_000) });
    expect(await (await scheduler()).tick(DUE + 86_400_000)).toBe(1);
    expect((await digests())[0].data).toMatchObject({ day: '2026-03-10' });
  });

  it('sends a missed digest when it comes back up later that day, not the next day', async () => {
    await recipient();
    await leads(1);
    // Down at 08:00; up at 20:59 the same day.
    expect(await (await scheduler()).tick(at('2026-03-10T23:59:00Z'))).toBe(1);
    expect((await digests())[0].data).toMatchObject({ day: '2026-03-09' });

    await sql.query('DELETE FROM webhook_messages');
    // Up only the day after, 09:00: that day's digest (about the 10th, with nothing to say) and not the 9th's.
    await sql.query('DELETE FROM notification_digests');
    expect(await (await scheduler()).tick(at('2026-03-11T12:00:00Z'))).toBe(0);
    expect(await digests()).toEqual([]);
  });

  it('writes each digest once when two instances tick together over one database', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => recipient()));
    await leads(3);
    const [one, two] = [await scheduler(), await scheduler()];
    const written = await Promise.all([one.tick(DUE), two.tick(DUE)]);
    expect(written[0] + written[1]).toBe(5);
    expect(await Promise.all([one.tick(DUE + 60_000), two.tick(DUE + 60_000), (await scheduler()).tick(DUE + 60_000)])).toEqual([0, 0, 0]);
    expect((await digests()).map((row) => row.recipient)).toEqual(ids.sort());
  });

  describe('its e-mail', () => {
    const rendered: DigestMail[] = [];
    const templates = {
      digest: (_language: string, mail: DigestMail) => (rendered.push(mail), { subject: `digest ${mail.day}`, text: 'text', html: '<p>html</p>' }),
    } as unknown as MailTemplates;
    let composer: NotificationDigestComposer;
    const data = { day: '2026-03-09', since: '2026-03-09T03:00:00.000Z', until: '2026-03-10T03:00:00.000Z' };
    const input = (fields: Partial<NotificationRecipient> = {}) => ({
      messageId: 'msg_1',
      eventType: 'notification.digest',
      data,
      recipient: { id: 'r', language: 'en', includePersonalData: true, ...fields } as NotificationRecipient,
      unsubscribeUrl: 'https://leads.example.com/unsubscribe/x',
    });

    beforeEach(() => {
      rendered.length = 0;
      composer = new NotificationDigestComposer(config, templates, reader, new MailComposers());
    });

    it('lists the first 200 of the day’s accepted leads with their count, the export past them, and what awaits review', async () => {
      const stored = await leads(201);
      await leads(2, { screeningVerdict: 'held' });
      await leads(1, { screeningVerdict: 'spam' });
      const mail = await composer.compose(input());
      expect(mail).toEqual({ subject: 'digest 2026-03-09', text: 'text', html: '<p>html</p>', leadIds: expect.any(Array) });
      expect(rendered).toHaveLength(1);
      const [digest] = rendered;
      expect(digest).toMatchObject({
        day: '2026-03-09',
        total: 201,
        awaitingReview: 2,
        includePersonalData: true,
        unsubscribeUrl: 'https://leads.example.com/unsubscribe/x',
        exportUrl: 'https://leads.example.com/api/v1/leads/export?since=2026-03-09T03%3A00%3A00.000Z&until=2026-03-10T03%3A00%3A00.000Z',
      });
      expect(digest.leads.map((lead) => lead.id)).toEqual(
        stored
          .slice(1)
          .reverse()
          .map((lead) => lead.id),
      );
      expect(mail!.leadIds).toEqual(digest.leads.map((lead) => lead.id));
    });

    it('leaves out a lead erased before it is sent, and writes nothing when nothing is left', async () => {
      const [kept, erased] = await leads(2);
      await sql.query(`DELETE FROM leads WHERE id = '${erased.id}'`);
      await composer.compose(input({ includePersonalData: false }));
      expect(rendered[0]).toMatchObject({ total: 1, awaitingReview: 0, includePersonalData: false });
      expect(rendered[0].leads.map((lead) => lead.id)).toEqual([kept.id]);

      await sql.query(`DELETE FROM leads WHERE id = '${kept.id}'`);
      expect(await composer.compose(input())).toBeNull();
    });

    it('is the composer of notification.digest', () => {
      const composers = new MailComposers();
      new NotificationDigestComposer(config, templates, reader, composers).onModuleInit();
      expect(composers.get('notification.digest')).toBeInstanceOf(NotificationDigestComposer);
    });
  });
});
