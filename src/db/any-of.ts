import { type RawBuilder, sql } from 'kysely'
import type { DialectName } from './create-db.js'

/**
 * `column` is one of a list given as a single parameter, so that one statement text (prepared once) serves lists of
 * every length: SQLite reads the list as JSON text, PostgreSQL as an array. Pass the list through `anyOfValue`.
 */
export const anyOf = (dialect: DialectName, column: string): RawBuilder<boolean> =>
  dialect === 'sqlite'
    ? sql<boolean>`${sql.ref(column)} in (select value from json_each(${''}))`
    : sql<boolean>`${sql.ref(column)} = any(${''})`

/** The parameter value of an `anyOf` list. */
export const anyOfValue = (dialect: DialectName, values: string[]): unknown =>
  dialect === 'sqlite' ? JSON.stringify(values) : values
