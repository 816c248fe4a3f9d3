// Stored agent registrations and operator logins, one of each per base URL, in the user's config folder (file mode 0600).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredRegistration {
  registration_id: string;
  registration_type: 'anonymous' | 'identity_assertion';
  /** The e-mail asserted with `register --email`, reused when the assertion has expired and we register again. */
  email?: string;
  client_name?: string;
  identity_assertion: string;
  assertion_expires: string;
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

export class CredentialStore {
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = join(dir, 'credentials.json');
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
