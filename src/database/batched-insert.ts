import type { ObjectLiteral, Repository } from 'typeorm';
import { isDatabaseUnavailable } from './database-errors.js';

/** Rows per INSERT at most; each size up to this is one prepared statement (see STATEMENT_CACHE_SIZE). */
export const MAX_BATCH_ROWS = 64;

interface Pending<T> {
  row: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the rows handed in during one turn of the event loop are written together, as one multi-row INSERT
 * of every column in the driver's own SQL, and each promise settles only once its row is committed. On SQLite a commit
 * per row wrote ~4 log pages each, so a checkpoint (with its fsyncs) stalled the event loop every ~250 rows: most of
 * the p99 tail (bench/RESULTS.md). A database that cannot be reached fails the batch at once; any other failure is
 * retried row by row, so that one bad row fails alone.
 */
export function batchedInsert<T extends ObjectLiteral>(repository: Repository<T>): (row: T) => Promise<void> {
  const { metadata, manager } = repository;
  const driver = manager.connection.driver;
  const columns = metadata.columns;
  const head = `INSERT INTO ${driver.escape(metadata.tableName)} (${columns.map((column) => driver.escape(column.databaseName)).join(', ')}) VALUES `;
  const statements: string[] = [];
  const statement = (rows: number): string => {
    if (!statements[rows]) {
      const tuples = Array.from({ length: rows }, (_, row) => {
        const placeholders = columns.map((column, index) => driver.createParameter(column.propertyName, row * columns.length + index));
        return `(${placeholders.join(', ')})`;
      });
      statements[rows] = head + tuples.join(', ');
    }
    return statements[rows];
  };
  const insert = (rows: T[]): Promise<unknown> =>
    manager.query(
      statement(rows.length),
      rows.flatMap((row) => columns.map((column) => driver.preparePersistentValue(column.getEntityValue(row), column))),
    );

  const write = async (batch: Pending<T>[]): Promise<void> => {
    try {
      await insert(batch.map((pending) => pending.row));
      for (const pending of batch) pending.resolve();
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // async, so that even a throw while a row's values are prepared settles that row alone
      await Promise.all(
        batch.map(async (pending) => {
          try {
            await insert([pending.row]);
            pending.resolve();
          } catch (rowError) {
            pending.reject(rowError);
          }
        }),
      );
    }
  };

  let queue: Pending<T>[] = [];
  const flush = (): void => {
    const batch = queue;
    queue = [];
    for (let start = 0; start < batch.length; start += MAX_BATCH_ROWS) void write(batch.slice(start, start + MAX_BATCH_ROWS));
  };

  return (row) =>
    new Promise<void>((resolve, reject) => {
      if (queue.push({ row, resolve, reject }) === 1) setImmediate(flush);
    });
}
