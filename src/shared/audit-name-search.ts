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
export async function createAuditNameSearch(db: Kysely<any>, dialect: DialectName, tenantId: string): Promise<void> {
  if (dialect !== 'sqlite') return
  // columnsize=0: no per-record sizes (they serve ranking, which this never does); a quarter less work per write.
  await sql`create virtual table ${auditNameSearchTable(tenantId)} using fts5(resource_name, tokenize = 'trigram', content = '', columnsize = 0)`.execute(db)
}

/**
 * Adds the tenant's audit records after its indexed position (`tenants.audit_names_seq`), up to seq `upTo`, to its
 * index and moves the position, in the caller's transaction: each record goes in once, whoever indexes.
 */
export async function indexAuditNames(tx: Kysely<any>, tenantId: string, upTo: number): Promise<void> {
  const { audit_names_seq: from } = await tx.selectFrom('tenants').select('audit_names_seq').where('id', '=', tenantId).executeTakeFirstOrThrow()
  if (upTo <= from) return
  await sql`insert into ${auditNameSearchTable(tenantId)} (rowid, resource_name)
    select seq, resource_name from audit_logs where tenant_id = ${tenantId} and seq > ${from} and seq <= ${upTo} and resource_name is not null`.execute(tx)
  await tx.updateTable('tenants').set({ audit_names_seq: upTo }).where('id', '=', tenantId).execute()
}

/** How soon after a commit its records are indexed: the commits in between share one index segment. */
const INDEX_DELAY_MS = 100
/** How often records appended by other processes (the CLI) are looked for; also done at start. */
const SWEEP_MS = 5000
/** Records indexed in one round at most, shared by the tenants behind: a long backlog (a large CLI import) takes several. */
const INDEX_BATCH = 20_000

/**
 * SQLite: indexes the names of audit records shortly after they commit, every tenant that is behind at once.
 * Indexed in the transaction that appended them, each write also wrote an index segment of its own (its pages in
 * the log, and the merges that follow): about 50 µs of a 340 µs PATCH, more when writes came one at a time.
 * Batched, the commits of 100 ms share a segment. A search reads the records not indexed yet directly
 * (audit-logs.repo.ts), so it finds a record as soon as its write is acknowledged.
 */
export class AuditNameIndexer {
  private sweeper: NodeJS.Timeout | undefined
  private readonly rounds = new CoalescedRuns(() => this.indexBehind().catch(this.onError), () => INDEX_DELAY_MS)

  constructor(
    private readonly database: Database,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    if (this.database.dialect !== 'sqlite') return
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
    const behind = await db.selectFrom('tenants').select(['id', 'audit_seq', 'audit_names_seq']).whereRef('audit_seq', '>', 'audit_names_seq').execute()
    if (behind.length === 0) return
    // An equal share of the batch for each tenant behind: one with a long backlog holds up no other.
    const share = Math.max(1, Math.floor(INDEX_BATCH / behind.length))
    const batches = behind.map((tenant) => ({ tenantId: tenant.id, upTo: Math.min(tenant.audit_seq, tenant.audit_names_seq + share) }))
    if (batches.some(({ upTo }, i) => upTo < behind[i].audit_seq)) this.rounds.request()
    // A transaction per tenant, all started at once: they commit together (group commit), and a tenant whose
    // indexing fails is rolled back alone, holding up no other tenant.
    await Promise.all(batches.map(({ tenantId, upTo }) => this.database.transaction((tx) => indexAuditNames(tx, tenantId, upTo)).catch(this.onError)))
  }
}
