import type { Kysely } from 'kysely'

/** nameKey of src/shared/search.ts as of this migration (migrations do not import the app: they are frozen). */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .trim()
    .toLowerCase()
}

/** Every table with a name_key, and whether it is unique per tenant. */
const TABLES: [table: string, unique: boolean][] = [
  ['use_cases', true],
  ['models', true],
  ['vendors', true],
  ['risk_types', true],
  ['risk_scenarios', true],
  ['workflow_stages', true],
  ['teams', true],
  ['custom_fields', true],
  ['policy_control_bases', false],
  ['policy_control_versions', false],
  ['policy_packs', false],
  ['questionnaires', false],
  ['users', false],
]
const BATCH = 1000

interface Stored {
  id: string
  tenant_id: string
  created_at: string
  name: string | null
  name_key: string | null
}
/** A row whose name_key changes to `key`. */
type Row = Omit<Stored, 'name'> & { key: string }

/**
 * Recomputes name_key now that names compare by NFKC without invisible characters (before: NFC, trimmed,
 * lower-cased). Rows made before kept their old key, so "ｄｕｐ" and "dup\u200b" did not clash with "dup".
 *
 * Where names must be unique per tenant, two existing rows may now share a key. The migration must not fail on
 * them, and must not rename anyone's record: the oldest row (created_at, then id) gets the key, and each other
 * one gets the key plus U+200B, "#" and its own id. nameKey removes U+200B, so no name can ever produce such a
 * key: a suffixed row keeps turning up in searches, a new record with that name is refused as a duplicate of the
 * oldest, and renaming a suffixed row gives it a plain key again. Each collision is reported as a process
 * warning (stderr) naming the table, tenant, key and ids, so an operator can tell the tenant to rename them.
 * No down: the old keys only compared less well.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // PostgreSQL wraps every migration in a transaction; SQLite's migrations have none.
  if (db.isTransaction) await backfill(db)
  else await db.transaction().execute(backfill)
}

async function backfill(db: Kysely<any>): Promise<void> {
  for (const [table, unique] of TABLES) {
    const changed = await changedRows(db, table)
    if (changed.length === 0) continue
    if (!unique) {
      for (const row of changed) await setKey(db, table, row.id, row.key)
      continue
    }
    const finals = await resolveCollisions(db, table, changed)
    // Two steps, because the unique index is checked row by row: one row's new key may be another's old one.
    for (const id of finals.keys()) await setKey(db, table, id, `\u200b${id}`)
    for (const [id, key] of finals) await setKey(db, table, id, key)
  }
}

/** The rows whose key the current rule computes differently (few: names with compatibility or invisible characters). */
async function changedRows(db: Kysely<any>, table: string): Promise<Row[]> {
  const changed: Row[] = []
  let after = ''
  for (;;) {
    const rows: Stored[] = await db
      .selectFrom(table)
      .select(['id', 'tenant_id', 'created_at', 'name', 'name_key'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute()
    for (const row of rows) {
      if (row.name === null) continue
      const key = nameKey(row.name)
      if (key !== row.name_key)
        changed.push({ id: row.id, tenant_id: row.tenant_id, created_at: row.created_at, name_key: row.name_key, key })
    }
    if (rows.length < BATCH) return changed
    after = rows[rows.length - 1].id
  }
}

/** The final key of each row that changes: the oldest row of a tenant's key keeps it, the others are suffixed. */
async function resolveCollisions(db: Kysely<any>, table: string, changed: Row[]): Promise<Map<string, string>> {
  const changedIds = new Set(changed.map((r) => r.id))
  const groups = new Map<string, Row[]>()
  for (const row of changed) {
    const group = `${row.tenant_id}\u0000${row.key}`
    groups.set(group, [...(groups.get(group) ?? []), row])
  }
  const finals = new Map<string, string>()
  for (const members of groups.values()) {
    const { tenant_id: tenantId, key } = members[0]
    // A row that does not change and already holds the key (at most one: the index is unique).
    const holder: Omit<Stored, 'name'> | undefined = await db
      .selectFrom(table)
      .select(['id', 'tenant_id', 'created_at', 'name_key'])
      .where('tenant_id', '=', tenantId)
      .where('name_key', '=', key)
      .executeTakeFirst()
    const rows = holder && !changedIds.has(holder.id) ? [...members, { ...holder, key }] : members
    rows.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
    const [oldest, ...others] = rows
    if (oldest.name_key !== key) finals.set(oldest.id, key)
    for (const row of others) finals.set(row.id, `${key}\u200b#${row.id}`)
    if (others.length > 0) {
      process.emitWarning(
        `${table}: tenant ${tenantId} has ${rows.length} names that now compare equal (${JSON.stringify(key)}); ${oldest.id} keeps the name key, ` +
          `${others.map((r) => r.id).join(', ')} get it suffixed with their id until renamed`,
        { code: 'AIGOV_NAME_KEY_COLLISION' },
      )
    }
  }
  return finals
}

async function setKey(db: Kysely<any>, table: string, id: string, key: string): Promise<void> {
  await db.updateTable(table).set({ name_key: key }).where('id', '=', id).execute()
}
