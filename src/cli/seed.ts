import { sql } from 'kysely'
import type { AuditedDatabase } from '../shared/audit-append.js'
import type { AuditLogRow, UseCaseRow } from '../db/tables.js'
import { createTenantsService, type TenantProvisioner } from '../modules/tenants/tenants.service.js'
import { workflowStart } from '../modules/workflow-stages/workflow-stages.service.js'
import { backdatedId } from '../shared/ids.js'
import { auditHash } from '../shared/audit-chain.js'
import { indexAllAuditNames } from '../shared/audit-name-search.js'

export interface SeedOptions {
  tenant: string
  useCases: number
  /** Total audit records: one `use_case.created` per use case, the rest `use_case.updated` spread over them. */
  auditLogs: number
  progress(done: number, total: number): void
}

const BATCH = 1000
const RISK_LEVELS = ['high', 'medium', 'low', 'none']

/**
 * Bulk-loads a tenant for scale tests. Every audit record stands for a change the rows really show
 * (a create, then description revisions), and the records extend the tenant's hash chain, so
 * /audit_logs/verify still holds afterwards.
 */
export async function seed(
  database: AuditedDatabase,
  provisioners: TenantProvisioner[],
  options: SeedOptions,
): Promise<{ useCases: number; auditLogs: number }> {
  const { tenant, useCases } = options
  const auditLogs = Math.max(options.auditLogs, useCases)
  if (useCases === 0 && auditLogs > 0)
    throw new Error('--audit-logs needs --use-cases: every seeded record describes a change to a seeded use case')
  await createTenantsService(database, provisioners).ensure(tenant)
  const total = useCases + auditLogs
  let done = 0
  const extraUpdates = auditLogs - useCases
  // Revisions of use case i: spread evenly, so record j of round r exists for the first use cases only.
  const revisions = (i: number) =>
    Math.floor(extraUpdates / Math.max(useCases, 1)) + (i < extraUpdates % Math.max(useCases, 1) ? 1 : 0)
  const rounds = useCases === 0 ? 0 : revisions(0)
  // Names are unique per tenant: a run tag lets the same tenant be seeded again.
  const run = Date.now().toString(36)
  const seededName = (i: number) => `Seeded use case ${run}-${String(i).padStart(7, '0')}`

  const keys = database.audit.keys
  await database.groupedTransaction(async (tx) => {
    let head = tx.selectFrom('tenants').select(['audit_seq', 'audit_head']).where('id', '=', tenant)
    if (database.dialect === 'postgres') head = head.forNoKeyUpdate()
    const chain = await head.executeTakeFirstOrThrow()
    const start = await workflowStart(tx, tenant)
    // Rows go in at their final revision; the records below tell how they got there.
    const ids: string[] = []
    // Timestamps step back from now so the seeded history reads in order and ends before live traffic.
    let clock = Date.now() - (auditLogs + 1) * 10
    const tick = () => (clock += 10)
    const audit: AuditLogRow[] = []
    const flushAudit = async () => {
      if (audit.length === 0) return
      await tx.insertInto('audit_logs').values(audit).execute()
      done += audit.length
      audit.length = 0
      options.progress(done, total)
    }
    type Written =
      | 'id'
      | 'tenant_id'
      | 'seq'
      | 'created_at'
      | 'prev_hash'
      | 'hash'
      | 'chain_key_id'
      | 'actor_type'
      | 'actor_id'
      | 'actor_name'
      | 'source'
      | 'request_id'
      | 'metadata'
      | 'sub_object_type'
      | 'sub_object_id'
      | 'sub_object_name'
    const record = async (entry: Omit<AuditLogRow, Written> & { created_at: number }) => {
      chain.audit_seq += 1
      const row = {
        id: backdatedId('al', entry.created_at),
        tenant_id: tenant,
        seq: chain.audit_seq,
        ...entry,
        created_at: new Date(entry.created_at).toISOString(),
        sub_object_type: null,
        sub_object_id: null,
        sub_object_name: null,
        actor_type: 'system',
        actor_id: null,
        actor_name: 'seed',
        source: 'cli',
        request_id: null,
        metadata: null,
        prev_hash: chain.audit_head,
        chain_key_id: keys.chain.id,
      }
      const hash = auditHash(row, keys)!
      chain.audit_head = hash
      audit.push({ ...row, hash })
      if (audit.length >= BATCH) await flushAudit()
    }

    for (let first = 0; first < useCases; first += BATCH) {
      const rows: UseCaseRow[] = []
      for (let i = first; i < Math.min(first + BATCH, useCases); i++) {
        const at = tick()
        const name = seededName(i)
        const row: UseCaseRow = {
          id: backdatedId('uc', at),
          tenant_id: tenant,
          name,
          name_key: name.toLowerCase(),
          description: `revision ${revisions(i)}`,
          ai_type: 'machine_learning',
          system_type: null,
          risk_category_level: RISK_LEVELS[i % RISK_LEVELS.length],
          regions: '["EU"]',
          industries: '[]',
          source: 'seed',
          owner_id: null,
          owner_type: null,
          ...start,
          workflow_rejection_reason: null,
          creator_id: null,
          created_at: new Date(at).toISOString(),
          updated_at: new Date(at).toISOString(),
        }
        rows.push(row)
        ids.push(row.id)
        await record({
          created_at: at,
          action: 'use_case.created',
          resource_type: 'use_case',
          resource_id: row.id,
          resource_name: name,
          use_case_id: row.id,
          changes: JSON.stringify({
            name: [null, name],
            description: [null, 'revision 0'],
            risk_category_level: [null, row.risk_category_level],
          }),
        })
      }
      await tx.insertInto('use_cases').values(rows).execute()
      done += rows.length
      options.progress(done, total)
    }
    for (let round = 1; round <= rounds; round++) {
      for (let i = 0; i < useCases && revisions(i) >= round; i++) {
        await record({
          created_at: tick(),
          action: 'use_case.updated',
          resource_type: 'use_case',
          resource_id: ids[i],
          resource_name: seededName(i),
          use_case_id: ids[i],
          changes: JSON.stringify({ description: [`revision ${round - 1}`, `revision ${round}`] }),
        })
      }
    }
    await flushAudit()
    await tx
      .updateTable('tenants')
      .set({ audit_seq: chain.audit_seq, audit_head: chain.audit_head })
      .where('id', '=', tenant)
      .execute()
  })
  // After the commit: the chain head stays locked until then, and an indexer waiting for it may hold a name (see addNames).
  await indexAllAuditNames(database, tenant)
  // Fresh planner statistics: without them PostgreSQL plans the first pages of a bulk-loaded table badly. Of the
  // tables written only, one statement each: a bare `analyze` reads every table of the database, other schemas'
  // too, and on a shared database outlasted the query timeout.
  for (const table of ['use_cases', 'audit_logs', 'tenants'] as const)
    await sql`analyze ${sql.table(table)}`.execute(database.db)
  return { useCases, auditLogs }
}
