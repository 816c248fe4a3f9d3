import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { OPERATOR_SCOPES } from '../auth/scopes.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OperatorClient } from './operator-client.entity.js';

export const CLIENT_ID_PREFIX = 'op_';
/** Longer ids are never ours (128 bits in base64url after the prefix); they are refused without a query. */
const MAX_CLIENT_ID_LENGTH = 64;
export const MAX_CLIENT_NAME_LENGTH = 200;
/** Control characters and bidirectional overrides would garble or disguise a name in `clients:list`. */
const UNPRINTABLE = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** What `clients:create` and `clients:rotate` print: the secret, shown this once. */
export interface IssuedCredentials {
  client_id: string;
  client_secret: string;
  scope: string;
}

/** A refusal a person can act on (unknown scope, unknown or revoked client), as the commands print it. */
export class OperatorClientError extends Error {}

const sha256 = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/**
 * The company's own OAuth clients (client credentials grant): created, listed, rotated and revoked by the `clients:*`
 * commands, authenticated by the token endpoint. A secret is 256 random bits, returned once and stored only as its
 * SHA-256: a slow hash buys nothing for a random secret and would cost CPU on every token request
 * (docs/decisions/0021-operator-clients-and-client-credentials.md).
 */
@Injectable()
export class OperatorClients {
  /** Compared against when the client id is unknown, so that a miss costs what a hit costs. */
  private readonly dummyHash = randomBytes(32);
  private readonly graceSeconds: number;

  constructor(
    @InjectRepository(OperatorClient) private readonly rows: Repository<OperatorClient>,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'clientSecretGraceSeconds'>,
  ) {
    this.graceSeconds = config.clientSecretGraceSeconds;
  }

  async create(name: string, scope: string): Promise<IssuedCredentials> {
    const scopes = operatorScopes(scope);
    const clientName = clientNameOf(name);
    const clientId = `${CLIENT_ID_PREFIX}${randomBytes(16).toString('base64url')}`;
    const secret = newSecret();
    await this.rows.insert({
      clientId,
      name: clientName,
      scopes: scopes.join(' '),
      secretHash: sha256(secret).toString('hex'),
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      createdAt: new Date(),
      rotatedAt: null,
      revokedAt: null,
    });
    return { client_id: clientId, client_secret: secret, scope: scopes.join(' ') };
  }

  /** Every client, revoked ones included, oldest first. */
  list(): Promise<OperatorClient[]> {
    return this.rows.find({ order: { createdAt: 'ASC', clientId: 'ASC' } });
  }

  /**
   * A new secret; the current one becomes the previous secret, accepted for CLIENT_SECRET_GRACE seconds more. A secret
   * still in its grace period from an earlier rotation stops at once. Tokens already issued stay valid.
   */
  async rotate(clientId: string): Promise<IssuedCredentials & { previousSecretExpiresAt: Date | null }> {
    const row = await this.live(clientId);
    const secret = newSecret();
    const now = new Date();
    const previousSecretExpiresAt = this.graceSeconds > 0 ? new Date(now.getTime() + this.graceSeconds * 1000) : null;
    const { affected } = await this.rows.update(
      { clientId, revokedAt: IsNull() },
      {
        secretHash: sha256(secret).toString('hex'),
        previousSecretHash: previousSecretExpiresAt ? row.secretHash : null,
        previousSecretExpiresAt,
        rotatedAt: now,
      },
    );
    if (!affected) throw new OperatorClientError(`Client ${clientId} was revoked meanwhile.`);
    return { client_id: clientId, client_secret: secret, scope: row.scopes, previousSecretExpiresAt };
  }

  /**
   * Revokes a client: its secrets stop at once, and so do its access tokens, on every instance (TokenService checks the
   * client on every request). Revoking a revoked client changes nothing and says when it was revoked.
   */
  async revoke(clientId: string): Promise<{ revokedAt: Date; already: boolean }> {
    const revokedAt = new Date();
    const { affected } = await this.rows.update({ clientId, revokedAt: IsNull() }, { revokedAt, previousSecretHash: null, previousSecretExpiresAt: null });
    if (affected) return { revokedAt, already: false };
    const row = await this.rows.findOneBy({ clientId });
    if (!row?.revokedAt) throw new OperatorClientError(`There is no client ${clientId}.`);
    return { revokedAt: row.revokedAt, already: true };
  }

  /**
   * The live client these credentials authenticate, or null. The secret's hash is compared in constant time, against a
   * dummy when the id is unknown, and against the previous secret too, whatever the row holds: how long a refusal takes
   * says nothing about which check failed.
   */
  async authenticate(clientId: string, secret: string): Promise<OperatorClient | null> {
    const row = clientId.length <= MAX_CLIENT_ID_LENGTH ? await this.rows.findOneBy({ clientId }) : null;
    const presented = sha256(secret);
    const matchesCurrent = timingSafeEqual(presented, this.storedHash(row?.secretHash));
    const matchesPrevious = timingSafeEqual(presented, this.storedHash(row?.previousSecretHash));
    if (!row || row.revokedAt) return null;
    const previousValid = matchesPrevious && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt.getTime() > Date.now();
    return matchesCurrent || previousValid ? row : null;
  }

  private storedHash(hex: string | null | undefined): Buffer {
    const hash = hex ? Buffer.from(hex, 'hex') : undefined;
    return hash?.length === 32 ? hash : this.dummyHash;
  }

  private async live(clientId: string): Promise<OperatorClient> {
    const row = await this.rows.findOneBy({ clientId });
    if (!row) throw new OperatorClientError(`There is no client ${clientId}.`);
    if (row.revokedAt) throw new OperatorClientError(`Client ${clientId} was revoked on ${row.revokedAt.toISOString()}; create a new one.`);
    return row;
  }
}

/** 256 random bits, base64url (43 characters). */
function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The scopes of a new client: space-separated, each an operator scope, at least one; a name given twice counts once. */
export function operatorScopes(scope: string): string[] {
  const scopes = [...new Set(scope.split(' ').filter(Boolean))];
  const unknown = scopes.filter((name) => !OPERATOR_SCOPES.includes(name));
  if (unknown.length) throw new OperatorClientError(`Unknown scope ${unknown.join(', ')}; operator scopes are: ${OPERATOR_SCOPES.join(' ')}.`);
  if (!scopes.length) throw new OperatorClientError(`Give at least one scope of: ${OPERATOR_SCOPES.join(' ')}.`);
  return scopes;
}

/** A client's name as stored: trimmed, 1 to 200 characters, nothing that would garble a terminal. */
export function clientNameOf(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new OperatorClientError('The client needs a name (--name), such as "CRM sync".');
  if ([...trimmed].length > MAX_CLIENT_NAME_LENGTH) throw new OperatorClientError(`The name is longer than ${MAX_CLIENT_NAME_LENGTH} characters.`);
  if (UNPRINTABLE.test(trimmed)) throw new OperatorClientError('The name may not contain control or bidirectional formatting characters.');
  return trimmed;
}
