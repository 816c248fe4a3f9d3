import type { Database, Statement } from 'better-sqlite3';
import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/** One INSERT with its values, bound by position. */
export interface InsertStatement {
  sql: string;
  values: unknown[];
}

/** Rows per INSERT at most: far below both databases' limits on bound values, and each size is one statement text. */
export const MAX_ROWS_PER_INSERT = 64;

/** Statement texts kept per entity (and, on SQLite, prepared statements per database): first in, first out. */
const CACHE_SIZE = 256;

/**
 * Multi-row INSERTs of one entity, written from TypeORM's metadata and with its value conversion (transformers, dates,
 * JSON). A value left undefined gets the column's default the way TypeORM's own insert gives it: DEFAULT on PostgreSQL;
 * on SQLite, whose VALUES take no DEFAULT, the entity's declared `default`, else NULL. Not an InsertQueryBuilder, which
 * took 17–40 µs per row here to build its SQL; this builds one text per shape of batch and keeps it.
 * What it cannot honour it refuses when it is set up, rather than skipping it: insert listeners and subscribers (they
 * may await, and the SQLite transaction of runInOneTransaction cannot), version, discriminator and uuid-generated columns.
 */
export class EntityInsert<T extends ObjectLiteral> {
  private readonly metadata: EntityMetadata;
  private readonly columns: EntityMetadata['columns'];
  private readonly texts = new Map<string, string>();

  /** `ignoreConflicts`: a row whose key the table holds already is skipped (ON CONFLICT DO NOTHING, both databases). */
  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<T>,
    private readonly ignoreConflicts = false,
  ) {
    this.metadata = dataSource.getMetadata(target);
    refuseWhatCannotBeHonoured(dataSource, this.metadata);
    this.columns = this.metadata.columns.filter((column) => column.isInsert);
  }

  /** The INSERTs of these rows, in order, at most MAX_ROWS_PER_INSERT rows each. */
  statements(rows: readonly Partial<T>[]): InsertStatement[] {
    const statements: InsertStatement[] = [];
    for (let start = 0; start < rows.length; start += MAX_ROWS_PER_INSERT) {
      statements.push(this.statement(rows.length <= MAX_ROWS_PER_INSERT ? rows : rows.slice(start, start + MAX_ROWS_PER_INSERT)));
    }
    return statements;
  }

  private statement(rows: readonly Partial<T>[]): InsertStatement {
    const { driver } = this.dataSource;
    const columns = this.columns;
    const values: unknown[] = [];
    // The shape: which values of each row are left to their defaults; rows with every value given add only a '|'.
    let shape = '';
    for (const row of rows) {
      for (let index = 0; index < columns.length; index++) {
        const value = columns[index].getEntityValue(row);
        if (value === undefined) shape += `${index},`;
        else values.push(driver.preparePersistentValue(value, columns[index]));
      }
      shape += '|';
    }
    let sql = this.texts.get(shape);
    if (sql === undefined) {
      sql = this.text(rows);
      remember(this.texts, shape, sql);
    }
    return { sql, values };
  }

  private text(rows: readonly Partial<T>[]): string {
    const { driver } = this.dataSource;
    const columns = this.columns;
    const sqlite = driver.options.type === 'better-sqlite3';
    let parameter = 0;
    const tuples = rows.map((row) => {
      const expressions = columns.map((column) => {
        if (column.getEntityValue(row) !== undefined) return driver.createParameter(column.propertyPath, parameter++);
        return sqlite ? (driver.normalizeDefault(column) ?? 'NULL') : 'DEFAULT';
      });
      return `(${expressions.join(', ')})`;
    });
    const table = this.metadata.tablePath
      .split('.')
      .map((part) => driver.escape(part))
      .join('.');
    const conflicts = this.ignoreConflicts ? ' ON CONFLICT DO NOTHING' : '';
    return `INSERT INTO ${table} (${columns.map((column) => driver.escape(column.databaseName)).join(', ')}) VALUES ${tuples.join(', ')}${conflicts}`;
  }
}

function refuseWhatCannotBeHonoured(dataSource: DataSource, metadata: EntityMetadata): void {
  const target = metadata.target;
  const subscribers = dataSource.subscribers.filter((subscriber) => {
    if (!subscriber.beforeInsert && !subscriber.afterInsert) return false;
    const listensTo = subscriber.listenTo?.() as unknown;
    return (
      !listensTo || listensTo === Object || listensTo === target || (typeof listensTo === 'function' && Object.prototype.isPrototypeOf.call(listensTo, target))
    );
  });
  const reasons = [
    ...(metadata.beforeInsertListeners.length + metadata.afterInsertListeners.length > 0 ? ['insert listeners'] : []),
    ...subscribers.map((subscriber) => `the subscriber ${subscriber.constructor.name}`),
    ...metadata.columns
      .filter((column) => column.isVersion || column.isDiscriminator || (column.isGenerated && column.generationStrategy === 'uuid'))
      .map((column) => `the version, discriminator or generated column ${column.propertyPath}`),
  ];
  if (reasons.length) throw new Error(`${metadata.name} cannot be written in one synchronous transaction: it has ${reasons.join(', ')}`);
}

/**
 * Runs INSERTs as one transaction. On SQLite, one better-sqlite3 transaction straight on the connection, with no await
 * inside: TypeORM shares one query runner there, so a transaction held across awaits would take in the statements that
 * other requests send meanwhile. On PostgreSQL, one statement (oneStatement), atomic by itself: one round trip.
 */
export function runInOneTransaction(dataSource: DataSource): (statements: InsertStatement[]) => Promise<void> {
  if (dataSource.options.type === 'better-sqlite3') return sqliteTransaction(dataSource);
  return async (statements) => {
    const { sql, values } = statements.length === 1 ? statements[0] : oneStatement(statements);
    await dataSource.query(sql, values);
  };
}

/**
 * PostgreSQL's INSERTs as one statement, each before the last in a WITH (data-modifying statements in WITH run, and
 * commit or fail, with the statement): one round trip where BEGIN, each INSERT and COMMIT took one each. A lead with its
 * outbox message is two INSERTs: lead intake on PostgreSQL went up 22% (median of 4 paired rounds of bench/run.mjs
 * --against, 2026-11-27). Placeholders are renumbered after those before them.
 */
export function oneStatement(statements: InsertStatement[]): InsertStatement {
  const values: unknown[] = [];
  const texts = statements.map(({ sql, values: own }) => {
    const offset = values.length;
    values.push(...own);
    // Only placeholders: the texts are EntityInsert's, with no literal that could hold a `$`.
    return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  });
  const last = texts.pop()!;
  return { sql: `WITH ${texts.map((text, index) => `w${index} AS (${text})`).join(', ')} ${last}`, values };
}

function sqliteTransaction(dataSource: DataSource): (statements: InsertStatement[]) => Promise<void> {
  let database: Database | undefined;
  let prepared = new Map<string, Statement>();
  let transaction: (statements: InsertStatement[]) => void;
  const statement = (sql: string): Statement => {
    let found = prepared.get(sql);
    if (!found) {
      found = database!.prepare(sql);
      remember(prepared, sql, found);
    }
    return found;
  };
  // async: a throw (a refused row, a closed database) becomes the returned promise's rejection.
  return async (statements) => {
    const connection = (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
    if (connection !== database) {
      // First use, or the data source was initialised again on a new connection.
      database = connection;
      prepared = new Map();
      transaction = connection.transaction((all: InsertStatement[]) => {
        for (const { sql, values } of all) statement(sql).run(values);
      });
    }
    // Inside a transaction that someone else left open these rows would commit, or roll back, with it.
    if (connection.inTransaction) throw new Error('a transaction is already open on the SQLite connection: the leads were not written');
    if (statements.length === 1) statement(statements[0].sql).run(statements[0].values);
    else transaction(statements);
  };
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.set(key, value);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
}
