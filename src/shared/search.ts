import { type RawBuilder, sql } from 'kysely'

/** Characters that render as nothing (zero-width space and joiners, soft hyphen, BOM, …). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu

/**
 * The form names are compared (uniqueness) and searched by: Unicode compatibility forms folded (NFKC: "ｄｕｐ" is
 * "dup"), invisible characters removed ("dup\u200bname" is "dupname"), trimmed, lower-cased.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').replace(INVISIBLE, '').trim().toLowerCase()
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
