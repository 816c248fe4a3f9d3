import { readdirSync } from 'node:fs';
import { MIGRATIONS } from '../../migrations/index.js';

describe('the migration list (migrations/index.ts)', () => {
  it('names every migration file of migrations/, oldest first, so that none is written and never run', () => {
    const files = readdirSync('migrations')
      .filter((name) => /^\d+-.+\.ts$/.test(name))
      .sort();
    const timestamps = files.map((name) => name.slice(0, name.indexOf('-')));
    expect(files.length).toBeGreaterThan(0);
    expect(MIGRATIONS.map((migration) => migration.name.slice(-timestamps[0].length))).toEqual(timestamps);
  });
});
