import type { ObjectLiteral, Repository } from 'typeorm';

/**
 * An INSERT of every column of an entity, written once from its metadata, in the driver's own SQL and placeholders.
 * The query builder would rebuild the same statement on every call; on the lead path that was a tenth of the time.
 */
export function preparedInsert<T extends ObjectLiteral>(repository: Repository<T>): (row: T) => Promise<void> {
  const { metadata, manager } = repository;
  const driver = manager.connection.driver;
  const columns = metadata.columns;
  const sql =
    `INSERT INTO ${driver.escape(metadata.tableName)} (${columns.map((column) => driver.escape(column.databaseName)).join(', ')}) ` +
    `VALUES (${columns.map((column, index) => driver.createParameter(column.propertyName, index)).join(', ')})`;
  return async (row) => {
    await manager.query(
      sql,
      columns.map((column) => driver.preparePersistentValue(column.getEntityValue(row), column)),
    );
  };
}
