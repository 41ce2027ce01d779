import { type Kysely, sql } from 'kysely'
import type { Database, DialectName } from '../db/create-db.js'
import { CoalescedRuns } from './coalesced-runs.js'

/**
 * SQLite: the trigram index behind audit `q`, one FTS5 table per tenant. One table for all tenants made a search
 * read every tenant's posting lists, so its time told whether another tenant had a word; a tenant's own table
 * holds only its records, and nothing another tenant writes changes what a search reads. (A tenant column in a
 * shared table would not do: FTS5 intersects full posting lists, and rowid ranges per tenant still share
 * segments.) Contentless, keyed by the record's `seq`: nothing is stored twice, and seq never changes (VACUUM
 * may renumber rowids, not seq). Filled by AuditNameIndexer shortly after the records commit (a trigger cannot
 * choose a table by tenant). PostgreSQL has one index whose keys start with the tenant instead (see
 * audit-logs.repo.ts).
 *
 * The name puts the tenant first: a tenant id holds no ':', so no tenant's table can be another's FTS5 shadow
 * table (`<name>_data`, `<name>_idx`, …), as `audit_name_search_a` and tenant `a_data` would be.
 */
export function auditNameSearchTable(tenantId: string) {
  return sql.table(`${tenantId}:audit_name_search`)
}

/** Creates a new tenant's index, in the transaction that creates the tenant. */
// biome-ignore lint/suspicious/noExplicitAny: its search tables are made per tenant at run time
export async function createAuditNameSearch(db: Kysely<any>, dialect: DialectName, tenantId: string): Promise<void> {
  if (dialect !== 'sqlite') return
  // columnsize=0: no per-record sizes (they serve ranking, which this never does); a quarter less work per write.
  await sql`create virtual table ${auditNameSearchTable(tenantId)} using fts5(resource_name, tokenize = 'trigram', content = '', columnsize = 0)`.execute(
    db,
  )
}

/** How soon after a commit its records are indexed: the commits in between share one index segment. */
const INDEX_DELAY_MS = 100
/** How often records appended by other processes (the CLI, other instances) are looked for; also done at start. */
const SWEEP_MS = 5000
/** Records indexed in one round at most, shared by the tenants behind: a long backlog (a large CLI import) takes several. */
const INDEX_BATCH = 20_000

/** A tenant's records to index: after seq `from` (its position when read), up to seq `upTo`. */
interface NameRange {
  tenantId: string
  from: number
  upTo: number
}

/**
 * Adds the tenant's audit records after its indexed position (`tenants.audit_names_seq`), up to seq `upTo`, to its
 * index and moves the position, in the caller's transaction: each record goes in once, whoever indexes.
 */
export async function indexAuditNames(
  // biome-ignore lint/suspicious/noExplicitAny: its search tables are made per tenant at run time
  tx: Kysely<any>,
  dialect: DialectName,
  tenantId: string,
  upTo: number,
): Promise<void> {
  const { audit_names_seq: from } = await tx
    .selectFrom('tenants')
    .select('audit_names_seq')
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow()
  if (upTo <= from) return
  if (dialect === 'postgres') return addNames(tx, [{ tenantId, from, upTo }])
  await sql`insert into ${auditNameSearchTable(tenantId)} (rowid, resource_name)
    select seq, resource_name from audit_logs where tenant_id = ${tenantId} and seq > ${from} and seq <= ${upTo} and resource_name is not null`.execute(
    tx,
  )
  await tx.updateTable('tenants').set({ audit_names_seq: upTo }).where('id', '=', tenantId).execute()
}

/**
 * PostgreSQL: the ranges' distinct names go into `audit_names` (migration 2026-11-27T18), whose gram indexes `q`
 * asks, and each tenant's position moves to the end of its range: three statements, however many tenants.
 * Positions are read unlocked, since a tenant's row is its chain head, which every write of the tenant locks: two
 * instances may then index one range, and the names' unique index keeps each name once (taken in name order, so
 * that two such inserts wait for each other, never deadlock). A position only moves forward, as the transaction's
 * last statement, so a head waits at most for its commit. A caller holding a chain head must not index: an indexer
 * waiting for that head may hold a name the caller waits for.
 */
// biome-ignore lint/suspicious/noExplicitAny: its search tables are made per tenant at run time
async function addNames(tx: Kysely<any>, ranges: NameRange[]): Promise<void> {
  const tenantIds = ranges.map((r) => r.tenantId)
  const upTos = ranges.map((r) => r.upTo)
  await sql`insert into audit_names (tenant_id, resource_name)
    select distinct a.tenant_id, a.resource_name
    from unnest(${tenantIds}::text[], ${ranges.map((r) => r.from)}::bigint[], ${upTos}::bigint[]) as r (tenant_id, after_seq, up_to)
    join audit_logs a on a.tenant_id = r.tenant_id and a.seq > r.after_seq and a.seq <= r.up_to
    where a.resource_name is not null
    order by a.resource_name, a.tenant_id
    on conflict do nothing`.execute(tx)
  // The batch's keys wait in the indexes' pending lists (fastupdate, 2026-11-28T00), which every search reads
  // whole: moved into the indexes now, in one pass that touches each key once for all of the batch's names.
  await sql`select gin_clean_pending_list('audit_names_trigrams'::regclass), gin_clean_pending_list('audit_names_five_grams'::regclass)`.execute(
    tx,
  )
  await sql`update tenants as t set audit_names_seq = r.up_to
    from unnest(${tenantIds}::text[], ${upTos}::bigint[]) as r (tenant_id, up_to)
    where t.id = r.tenant_id and t.audit_names_seq < r.up_to`.execute(tx)
}

/**
 * Indexes every record of the tenant not indexed yet, INDEX_BATCH at a time, each batch in a transaction of its
 * own: for records appended by a process without an indexer (the CLI's seed), right after it appended them.
 */
export async function indexAllAuditNames(database: Database, tenantId: string): Promise<void> {
  for (;;) {
    const tenant = await database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_names_seq'])
      .where('id', '=', tenantId)
      .executeTakeFirstOrThrow()
    if (tenant.audit_names_seq >= tenant.audit_seq) return
    const upTo = Math.min(tenant.audit_seq, tenant.audit_names_seq + INDEX_BATCH)
    await database.groupedTransaction((tx) => indexAuditNames(tx, database.dialect, tenantId, upTo))
  }
}

/**
 * The seqs of the tenant's records not in its name index yet (past its position), or null when there are more than
 * `most`: a search takes them as candidates. Read before the index, so that a batch indexed meanwhile is found there.
 */
// biome-ignore lint/suspicious/noExplicitAny: its search tables are made per tenant at run time
export async function notIndexedSeqs(db: Kysely<any>, tenantId: string, most: number): Promise<number[] | null> {
  const rows: { seq: number }[] = await db
    .selectFrom('audit_logs')
    .select('seq')
    .where('tenant_id', '=', tenantId)
    .where('seq', '>', db.selectFrom('tenants').select('audit_names_seq').where('id', '=', tenantId))
    // In seq order, so that the planner reads the tenant's records by seq from the position on, not all of them.
    .orderBy('seq')
    .limit(most + 1)
    .execute()
  return rows.length > most ? null : rows.map((r) => r.seq)
}

/**
 * Indexes the names of audit records shortly after they commit, every tenant that is behind at once. Indexed in
 * the transaction that appended them, each write also paid for its index entries while it held its tenant's chain
 * head. SQLite: each write wrote an index segment of its own (its pages in the log, and the merges that follow);
 * batched, the commits of 100 ms share a segment. PostgreSQL: a trigger on the append put each new name's keys into
 * the two gram indexes inside every write.
 * A search reads the records not indexed yet directly (audit-logs.repo.ts), so it finds a record as soon as its
 * write is acknowledged.
 */
export class AuditNameIndexer {
  private sweeper: NodeJS.Timeout | undefined
  private readonly rounds = new CoalescedRuns(
    () => this.indexBehind().catch(this.onError),
    () => INDEX_DELAY_MS,
  )

  constructor(
    private readonly database: Database,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    this.database.commits.on('audit', this.rounds.request)
    this.sweeper = setInterval(this.rounds.request, SWEEP_MS)
    this.sweeper.unref()
    this.rounds.request()
  }

  /** Stops, once the batch under way (if any) has committed. */
  async stop(): Promise<void> {
    this.database.commits.off('audit', this.rounds.request)
    clearInterval(this.sweeper)
    await this.rounds.stop()
  }

  private async indexBehind(): Promise<void> {
    const { db } = this.database
    // Read outside the transaction: nothing behind (the usual case when idle) takes no write lock.
    const behind = await db
      .selectFrom('tenants')
      .select(['id', 'audit_seq', 'audit_names_seq'])
      .whereRef('audit_seq', '>', 'audit_names_seq')
      .execute()
    if (behind.length === 0) return
    // An equal share of the batch for each tenant behind: one with a long backlog holds up no other.
    const share = Math.max(1, Math.floor(INDEX_BATCH / behind.length))
    const batches = behind.map((tenant) => ({
      tenantId: tenant.id,
      upTo: Math.min(tenant.audit_seq, tenant.audit_names_seq + share),
    }))
    if (batches.some(({ upTo }, i) => upTo < behind[i].audit_seq)) this.rounds.request()
    if (this.database.dialect === 'postgres') {
      // One transaction for every tenant behind: their names share one table, and a round costs a few statements.
      const ranges = batches.map(({ tenantId, upTo }, i) => ({ tenantId, from: behind[i].audit_names_seq, upTo }))
      return this.database.groupedTransaction((tx) => addNames(tx, ranges))
    }
    // SQLite: a transaction per tenant (its own index), all started at once: they commit together (group commit),
    // and a tenant whose indexing fails is rolled back alone, holding up no other tenant.
    await Promise.all(
      batches.map(({ tenantId, upTo }) =>
        this.database
          .groupedTransaction((tx) => indexAuditNames(tx, this.database.dialect, tenantId, upTo))
          .catch(this.onError),
      ),
    )
  }
}
