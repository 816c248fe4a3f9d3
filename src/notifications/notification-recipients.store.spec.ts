import { DataSource } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { uuidv7 } from '../database/uuid-v7.js';
import type { NotificationRecipient } from './notification-recipient.entity.js';
import { NotificationRecipientsStore } from './notification-recipients.store.js';

/**
 * The recipients' store against a real database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set): a token
 * confirms once however many ask at the same time, only while live; unsubscribing keeps its first time; the
 * subscriptions the fan-out reads; permanent failures counted and forgotten on success.
 */
const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('notification recipients on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let others: DataSource[] = [];
  let store: NotificationRecipientsStore;
  let n = 0;

  const row = (overrides: Partial<NotificationRecipient> = {}): NotificationRecipient => {
    const now = Date.now();
    const email = `r${++n}@example.com`;
    return {
      id: uuidv7(now),
      email,
      emailFolded: email,
      mode: 'immediate',
      language: 'pt-BR',
      includePersonalData: true,
      status: 'pending',
      statusReason: null,
      confirmationTokenHash: `${n}`.padStart(64, '0'),
      confirmationExpiresAt: now + 60_000,
      confirmedAt: null,
      unsubscribedAt: null,
      permanentFailures: 0,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
      ...overrides,
    };
  };
  const insert = async (r: NotificationRecipient) => {
    await store.transaction(() => store.insert(r));
    return r;
  };

  beforeAll(async () => {
    database = await freshDatabase(kind);
    const config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);
    store = new NotificationRecipientsStore(dataSource);
    // On PostgreSQL, other connections race the first (other instances).
    if (kind === 'postgres') others = await Promise.all([1, 2, 3].map(() => new DataSource(dataSourceOptions(config)).initialize()));
  });
  afterAll(async () => {
    for (const other of others) await other.destroy();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('round-trips a recipient, its boolean and times included', async () => {
    const r = await insert(row({ includePersonalData: false, language: 'en' }));
    expect(await store.find(r.id)).toEqual(r);
    expect(await store.idOfAddress(r.emailFolded)).toBe(r.id);
  });

  it('confirms with a live token once, however many ask at once, and never with an expired one', async () => {
    const r = await insert(row());
    const stores = [store, ...others.map((other) => new NotificationRecipientsStore(other))];
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % stores.length].confirm(r.confirmationTokenHash!, Date.now())));
    expect(answers.filter((id) => id === r.id)).toHaveLength(1);
    expect(await store.find(r.id)).toMatchObject({ status: 'confirmed', confirmationTokenHash: null, confirmationExpiresAt: null });
    expect(await store.confirmable(r.confirmationTokenHash!, Date.now())).toBe(false);

    const expired = await insert(row({ confirmationExpiresAt: Date.now() - 1 }));
    expect(await store.confirmable(expired.confirmationTokenHash!, Date.now())).toBe(false);
    expect(await store.confirm(expired.confirmationTokenHash!, Date.now())).toBeUndefined();
    expect((await store.find(expired.id))!.status).toBe('pending');
  });

  it('restarts any recipient but a confirmed one, forgetting its failures', async () => {
    const bouncing = await insert(row({ status: 'bouncing', statusReason: 'x', permanentFailures: 3, failingSince: 5, confirmationTokenHash: null }));
    const restarted = await store.transaction(() => store.restart(bouncing.id, { tokenHash: 'f'.repeat(64), expiresAt: 99 }, 100));
    expect(restarted).toBe(true);
    expect(await store.find(bouncing.id)).toMatchObject({
      status: 'pending',
      statusReason: null,
      permanentFailures: 0,
      failingSince: null,
      confirmationTokenHash: 'f'.repeat(64),
    });
    const confirmed = await insert(row({ status: 'confirmed', confirmationTokenHash: null }));
    expect(await store.transaction(() => store.restart(confirmed.id, { tokenHash: 'e'.repeat(64), expiresAt: 99 }, 100))).toBe(false);
  });

  it('keeps the first time an address unsubscribed, and says when there is no such recipient', async () => {
    const r = await insert(row({ status: 'confirmed' }));
    expect(await store.unsubscribe(r.id, 'one', 1000)).toBe(true);
    expect(await store.unsubscribe(r.id, 'two', 2000)).toBe(true);
    expect(await store.find(r.id)).toMatchObject({ status: 'unsubscribed', unsubscribedAt: 1000, statusReason: 'two', confirmationTokenHash: null });
    expect(await store.unsubscribe(uuidv7(), 'x', 1)).toBe(false);
  });

  it('subscribes only confirmed immediate recipients to lead.received, and counts permanent failures until a success', async () => {
    const immediate = await insert(row({ status: 'confirmed' }));
    const digest = await insert(row({ status: 'confirmed', mode: 'daily_digest' }));
    const pending = await insert(row());
    const subscriptions = await store.transaction(() => store.subscriptions());
    const of = (id: string) => subscriptions.find((s) => s.id === id);
    expect(of(immediate.id)).toMatchObject({ events: ['lead.received'], enabled: true });
    expect(of(digest.id)).toMatchObject({ events: [], enabled: true });
    expect(of(pending.id)).toMatchObject({ events: [], enabled: true });

    expect(await store.permanentFailure(immediate.id, 1)).toBe(1);
    expect(await store.permanentFailure(immediate.id, 2)).toBe(2);
    await store.transaction(function* () {
      yield store.recovered(immediate.id);
    });
    expect((await store.find(immediate.id))!.permanentFailures).toBe(0);
    await store.transaction(function* () {
      yield store.bouncing(immediate.id, 'why', 3);
    });
    expect(await store.find(immediate.id)).toMatchObject({ status: 'bouncing', statusReason: 'why' });
    expect((await store.transaction(() => store.subscriptions())).find((s) => s.id === immediate.id)).toMatchObject({ enabled: false, events: [] });
  });
});
