import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source.js';
import { ConsentText } from '../../src/leads/consent-text.entity.js';
import { Lead } from '../../src/leads/lead.entity.js';
import type { TestDatabase } from './database.js';

/**
 * Writes leads (storedLead rows) and consent wordings straight into the database of a service that runs as its own
 * process, through TypeORM as the service writes them: thousands of leads in seconds, where as many POSTs would take
 * minutes. The service must have started once (it applies the migrations).
 */
export async function seedLeads(database: TestDatabase, leads: Lead[], wordings: { sha256: string; text: string }[] = []): Promise<void> {
  const options = dataSourceOptions({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '' });
  const dataSource = await new DataSource({ ...options, entities: [Lead, ConsentText] } as typeof options).initialize();
  try {
    if (wordings.length) await dataSource.getRepository(ConsentText).insert(wordings.map((wording) => ({ ...wording, createdAt: Date.now() })));
    for (let start = 0; start < leads.length; start += 200) await dataSource.getRepository(Lead).insert(leads.slice(start, start + 200));
  } finally {
    await dataSource.destroy();
  }
}
