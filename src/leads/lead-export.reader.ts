import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { LEAD_VIEW_COLUMNS, LeadFilter, LeadPosition, LeadReader, SCREENING_COLUMNS } from './lead-reader.service.js';

/**
 * A lead as an export writes it: the values of LEAD_VIEW_COLUMNS then SCREENING_COLUMNS (RECORD_COLUMNS), in that order,
 * received_at and screening_decided_at as the read API shows them.
 */
export type LeadRecord = (string | null)[];

export const RECORD_COLUMNS = [...LEAD_VIEW_COLUMNS, ...SCREENING_COLUMNS] as const;
const ID = RECORD_COLUMNS.indexOf('id');
const RECEIVED_AT = RECORD_COLUMNS.indexOf('received_at');
const DECIDED_AT = RECORD_COLUMNS.indexOf('screening_decided_at');
/** TypeORM's SQLite datetime text, UTC: `2026-11-25 10:00:00.000`. */
const SQLITE_DATETIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/**
 * The export's pages: LeadReader's keyset queries (the same filters, order and SQL as the list), each page as arrays
 * rather than LeadView objects. On SQLite the query runs as a better-sqlite3 statement in raw mode, which returns
 * arrays without building an object per row: twice the rows per second of the objects TypeORM returns
 * (docs/decisions/0024-streamed-export.md).
 */
@Injectable()
export class LeadExportReader {
  private readonly sqlite: boolean;
  private database?: Database;
  private statements = new Map<string, Statement>();

  constructor(
    private readonly reader: LeadReader,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.sqlite = dataSource.options.type === 'better-sqlite3';
  }

  /** Up to `limit` leads after `after`, in list order: LeadReader.keysetQueries in turn, until one fills the page. */
  async page(filter: LeadFilter, limit: number, after?: LeadPosition): Promise<LeadRecord[]> {
    const queries = this.reader.keysetQueries(filter, limit, after);
    if (this.sqlite) {
      let records: unknown[][] = [];
      for (const { sql, params } of queries) {
        records = this.statement(sql).all(params) as unknown[][];
        if (records.length === limit) break;
      }
      for (const record of records) {
        record[RECEIVED_AT] = this.receivedAt(record[RECEIVED_AT]);
        // Null only in a SQLite row no service wrote (the column is nullable there): the automatic verdict's instant.
        record[DECIDED_AT] = record[DECIDED_AT] === null ? record[RECEIVED_AT] : this.receivedAt(record[DECIDED_AT]);
      }
      return records as LeadRecord[];
    }
    let rows: Record<string, unknown>[] = [];
    for (const { sql, params } of queries) {
      rows = (await this.dataSource.query(sql, params)) as Record<string, unknown>[];
      if (rows.length === limit) break;
    }
    return rows.map(
      (row) =>
        RECORD_COLUMNS.map((column) =>
          column === 'received_at' || column === 'screening_decided_at' ? this.reader.receivedAtOf(row[column]) : row[column],
        ) as LeadRecord,
    );
  }

  /** Where the last record of a page stands, for the next page. */
  static positionOf(record: LeadRecord): LeadPosition {
    return { receivedAt: Date.parse(record[RECEIVED_AT]!), id: record[ID]! };
  }

  /** The text as TypeORM's hydration and toISOString() would give it, without the Date; anything else goes through them. */
  private receivedAt(stored: unknown): string {
    return typeof stored === 'string' && SQLITE_DATETIME.test(stored) ? `${stored.slice(0, 10)}T${stored.slice(11)}Z` : this.reader.receivedAtOf(stored);
  }

  /** A raw-mode statement on TypeORM's one better-sqlite3 connection, prepared once per text (a few dozen at most). */
  private statement(sql: string): Statement {
    const connection = (this.dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
    if (connection !== this.database) {
      this.database = connection;
      this.statements = new Map();
    }
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql).raw(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
