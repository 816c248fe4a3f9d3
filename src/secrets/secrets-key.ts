import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/config.js';

/** The service key cannot be had: the service must not start (or seal anything) without it. */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

/** The key file of the embedded default, beside the SQLite database. */
export const secretsKeyFile = (config: Pick<AppConfig, 'dataDir'>): string => join(config.dataDir, 'secrets.key');

/**
 * The key that seals stored secrets: SECRETS_KEY, or on SQLite the key file in DATA_DIR, made on first use. PostgreSQL
 * serves several instances, and a key file made by each would seal rows that the others cannot open.
 */
export function secretsKey(config: Pick<AppConfig, 'secretsKey' | 'databaseUrl' | 'dataDir'>): Buffer {
  if (config.secretsKey) return config.secretsKey;
  if (config.databaseUrl) {
    throw new SecretsKeyError(
      'SECRETS_KEY is required with DATABASE_URL: every instance must share the key that seals stored secrets (signing keys, ' +
        'webhook secrets). Make one with `openssl rand -base64 32` and give the same value to every instance.',
    );
  }
  const file = secretsKeyFile(config);
  if (!existsSync(file)) createKeyFile(file);
  return readKeyFile(file);
}

/**
 * Written whole under a temporary name, then linked into place, which fails if the file exists: of two processes
 * starting at once one key wins, and the other reads it, never a half-written file.
 */
function createKeyFile(file: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
}

function readKeyFile(file: string): Buffer {
  // Permission bits mean nothing on Windows.
  const mode = statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SecretsKeyError(
      `${file} may be read by other users (mode ${mode.toString(8).padStart(4, '0')}): make it 0600 (chmod 600 ${file}) and start again`,
    );
  }
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) {
    throw new SecretsKeyError(`${file} is not a secrets key (32 bytes as base64 on one line): restore the file this service made, or its backup`);
  }
  return Buffer.from(text, 'base64');
}
