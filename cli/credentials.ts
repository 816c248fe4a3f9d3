// Stored agent registrations and operator logins, one of each per base URL, in the user's config folder (file mode 0600).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredRegistration {
  registration_id: string;
  registration_type: 'anonymous' | 'identity_assertion' | 'service_auth';
  /** The e-mail asserted with `register --email`, reused when the assertion has expired and we register again. */
  email?: string;
  client_name?: string;
  identity_assertion: string;
  assertion_expires: string;
  /** Renews the assertion for the same registration (one identity per installation); rotated at each use. */
  refresh_token?: string;
  refresh_token_expires?: string;
  claim_token?: string;
  access_token?: string;
  access_token_expires?: string;
}

/** `leads login`: an operator client's access token, and its secret only when the user asked (`--save-secret`). */
export interface StoredLogin {
  client_id: string;
  /** The scopes the token was granted, space-separated. */
  scope: string;
  client_secret?: string;
  access_token: string;
  access_token_expires: string;
}

interface CredentialsFile {
  version: 1;
  /** Agent registrations by base URL. */
  servers: Record<string, StoredRegistration>;
  /** Operator logins by base URL (absent in files written before logins existed). */
  logins?: Record<string, StoredLogin>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LEADS_CONFIG_DIR) return env.LEADS_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'leads-cli');
}

/** A lock older than this is taken to be left by a process that died: a refresh is one request of at most 30 s. */
const STALE_LOCK_MS = 60_000;
const LOCK_POLL_MS = 50;

export class CredentialStore {
  readonly file: string;
  readonly lockFile: string;

  constructor(readonly dir: string) {
    this.file = join(dir, 'credentials.json');
    this.lockFile = `${this.file}.lock`;
  }

  /**
   * Runs `work` holding an exclusive lock beside the credentials file (created with `wx`, so one process at a time
   * across every process of this user), so that two commands never spend one refresh token. A lock whose holder is
   * gone (its process no longer exists on this host, or the lock is older than a minute) is taken over.
   */
  async withLock<T>(work: () => Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const content = JSON.stringify({ pid: process.pid, at: new Date().toISOString() });
    for (;;) {
      try {
        writeFileSync(this.lockFile, content, { flag: 'wx', mode: 0o600 });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (this.lockIsStale()) rmSync(this.lockFile, { force: true });
        else await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      }
    }
    try {
      return await work();
    } finally {
      // Only our own lock is removed: one taken over from us as stale belongs to its new holder.
      if (this.lockHolder() === content) rmSync(this.lockFile, { force: true });
    }
  }

  private lockHolder(): string | undefined {
    try {
      return readFileSync(this.lockFile, 'utf8');
    } catch {
      return undefined;
    }
  }

  private lockIsStale(): boolean {
    try {
      if (Date.now() - statSync(this.lockFile).mtimeMs > STALE_LOCK_MS) return true;
      const { pid } = JSON.parse(this.lockHolder() ?? '{}') as { pid?: unknown };
      if (typeof pid !== 'number' || pid === process.pid) return typeof pid !== 'number';
      process.kill(pid, 0);
      return false;
    } catch (error) {
      // ESRCH: no such process. EPERM: it exists (another user's). A lock being written reads as empty: not stale yet.
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ESRCH' || code === 'ENOENT';
    }
  }

  private read(): CredentialsFile {
    if (!existsSync(this.file)) return { version: 1, servers: {}, logins: {} };
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as CredentialsFile;
      if (parsed && typeof parsed.servers === 'object' && parsed.servers)
        return { ...parsed, logins: typeof parsed.logins === 'object' && parsed.logins ? parsed.logins : {} };
    } catch {
      // unreadable: treated as empty, rewritten on the next save
    }
    return { version: 1, servers: {}, logins: {} };
  }

  private write(data: CredentialsFile): void {
    if (Object.keys(data.servers).length === 0 && Object.keys(data.logins ?? {}).length === 0) {
      rmSync(this.file, { force: true });
      return;
    }
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }

  get(baseUrl: string): StoredRegistration | undefined {
    return this.read().servers[baseUrl];
  }

  save(baseUrl: string, registration: StoredRegistration): void {
    const data = this.read();
    data.servers[baseUrl] = registration;
    this.write(data);
  }

  remove(baseUrl: string): boolean {
    const data = this.read();
    if (!data.servers[baseUrl]) return false;
    delete data.servers[baseUrl];
    this.write(data);
    return true;
  }

  getLogin(baseUrl: string): StoredLogin | undefined {
    return this.read().logins?.[baseUrl];
  }

  saveLogin(baseUrl: string, login: StoredLogin): void {
    const data = this.read();
    data.logins = { ...data.logins, [baseUrl]: login };
    this.write(data);
  }

  removeLogin(baseUrl: string): boolean {
    const data = this.read();
    if (!data.logins?.[baseUrl]) return false;
    delete data.logins[baseUrl];
    this.write(data);
    return true;
  }
}
