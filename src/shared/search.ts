import { type RawBuilder, sql } from 'kysely'

/** The lower-cased, trimmed form names are compared and searched by. */
export function nameKey(name: string): string {
  return name.normalize('NFC').trim().toLowerCase()
}

/**
 * Case-insensitive `column LIKE %q%`, with LIKE's wildcards in q taken literally.
 * `lowerColumn`: the column is already lower-cased (a name_key), so it can be compared as is.
 */
export function containsText(column: string, q: string, lowerColumn = true): RawBuilder<boolean> {
  const escaped = nameKey(q).replace(/[\\%_]/g, (c) => `\\${c}`)
  const target = lowerColumn ? sql.ref(column) : sql`lower(${sql.ref(column)})`
  return sql<boolean>`${target} like ${`%${escaped}%`} escape '\\'`
}
