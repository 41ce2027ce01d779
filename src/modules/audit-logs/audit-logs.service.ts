import { Readable } from 'node:stream'
import type { Database } from '../../db/create-db.js'
import type { AuditLogRow } from '../../db/tables.js'
import { AppError, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import { Counts } from '../../shared/counts.js'
import type { Deps } from '../../shared/deps.js'
import {
  type AuditKeys,
  auditHash,
  type Checkpoint,
  checkpointSignatureValid,
  legacyProof,
  legacyProofValid,
  signCheckpoint,
} from '../../shared/audit-chain.js'
import { GENESIS_HASH } from '../../shared/mutation.js'
import { itemText, pageBody } from '../../shared/item-json.js'
import { type Keyset, keyset, type Page, toPage } from '../../shared/pagination.js'
import * as repo from './audit-logs.repo.js'
import { csvHeader, csvRow } from './audit-export.js'
import type {
  AuditCheckpoint,
  AuditLog,
  AuditLogExportQuery,
  AuditLogListQuery,
  AuditPublicKey,
  AuditVerification,
  AuditVerifyQuery,
} from './audit-logs.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { auditLogJson } from './audit-logs.repo.js'

export type AuditLogsService = ReturnType<typeof createAuditLogsService>

/**
 * Rows per read while exporting or verifying. SQLite reads block the event loop, so a batch must be short
 * enough that other tenants' requests served between batches keep their latency (measured in
 * bench/results/design-measurements.md, "Export batches").
 */
const EXPORT_BATCH = 100
const EXPORT_CHUNK = 50
/** Exports one tenant may run at once on an instance; more answer 429. */
export const EXPORTS_PER_TENANT = 3
/** Exports running in this process, by tenant. */
const runningExports = new Counts()

export function createAuditLogsService(deps: Pick<Deps, 'database'>) {
  const { db, dialect } = deps.database

  /** Every matching record as export lines, read in keyset batches so memory stays flat however many there are. */
  async function* exportLines(ctx: Ctx, query: AuditLogExportQuery): AsyncGenerator<string> {
    const { format, sort, ...filter } = query
    if (format === 'csv') yield csvHeader
    // NDJSON lines are the records as the database renders them; CSV flattens the record objects.
    const batch = (ks: Keyset) =>
      format === 'csv'
        ? repo
            .listAuditLogs(db, dialect, ctx.tenantId, filter, ks, 'row')
            .then((rows) => toPage(rows, ks, (row) => csvRow(toAuditLog(row))))
        : repo
            .listAuditLogs(db, dialect, ctx.tenantId, filter, ks, 'json')
            .then((rows) => toPage(rows, ks, (row) => `${row.item}\n`))
    let ks = keyset({ sort, page_limit: EXPORT_BATCH }, repo.AUDIT_SORT_COLUMNS)
    for (;;) {
      await longReadTurn()
      const page = await batch(ks)
      // Lines go out in small chunks while the rows they came from are already garbage: what waits in the
      // stream's buffer stays small and dies young instead of filling the old generation.
      for (let i = 0; i < page.items.length; i += EXPORT_CHUNK) yield page.items.slice(i, i + EXPORT_CHUNK).join('')
      if (!page.pagination.next_cursor) return
      ks = keyset({ sort, page_limit: EXPORT_BATCH, page_after: page.pagination.next_cursor }, repo.AUDIT_SORT_COLUMNS)
    }
  }

  return {
    async list(ctx: Ctx, query: AuditLogListQuery): Promise<Page<AuditLog>> {
      const { filter, ks } = pageOf(query)
      return toPage(await repo.listAuditLogs(db, dialect, ctx.tenantId, filter, ks, 'row'), ks, toAuditLog)
    },

    /** The page `list` gives, as the JSON bytes of its page schema, its records rendered by the database. */
    async listJson(ctx: Ctx, query: AuditLogListQuery): Promise<Buffer> {
      const { filter, ks } = pageOf(query)
      const page = toPage(await repo.listAuditLogs(db, dialect, ctx.tenantId, filter, ks, 'json'), ks, (row) =>
        itemText(row.item),
      )
      return pageBody(page.items, page.pagination)
    },

    /**
     * The export as a stream. Refused with 429 while the tenant already runs EXPORTS_PER_TENANT exports here;
     * the slot is freed when the stream closes, whether it ended, failed or its client went away.
     */
    export(ctx: Ctx, query: AuditLogExportQuery): Readable {
      const running = runningExports.of(ctx.tenantId)
      if (running >= EXPORTS_PER_TENANT) {
        throw new AppError(
          'rate_limited',
          `this tenant already runs ${running} audit exports; retry when one has finished`,
          undefined,
          { retry_after: 5 },
        )
      }
      runningExports.add(ctx.tenantId, 1)
      const stream = Readable.from(exportLines(ctx, query))
      stream.once('close', () => runningExports.add(ctx.tenantId, -1))
      return stream
    },

    /**
     * Recomputes the tenant's keyed hash chain in sequence and names the first record that does not match. With a
     * checkpoint kept earlier, also proves the record at its sequence still has its head hash: nothing up to it changed.
     */
    async verify(ctx: Ctx, query: AuditVerifyQuery = {}): Promise<AuditVerification> {
      const keys = deps.database.audit.keys
      const checkpoint = query.checkpoint === undefined ? undefined : readCheckpoint(query.checkpoint, ctx, keys)
      let checked = 0
      let unkeyed = 0
      let prevHash = GENESIS_HASH
      let afterSeq = 0
      let matched: boolean | undefined
      const outcome = (ok: boolean, firstBadId: string | null, reason?: string): AuditVerification => {
        const allOk = ok && matched !== false
        const why =
          reason ??
          (allOk
            ? undefined
            : `the record at the checkpoint's sequence ${checkpoint?.sequence} no longer has the checkpoint's head hash`)
        return {
          ok: allOk,
          checked,
          first_bad_id: firstBadId,
          unkeyed,
          ...(why === undefined ? {} : { reason: why }),
          ...(checkpoint ? { checkpoint: { sequence: checkpoint.sequence, matched: matched ?? false } } : {}),
        }
      }
      // Which records may be unkeyed is itself proven under the chain key: a rewrite in the old scheme cannot pass.
      const proof = await repo.findLegacyProof(db, ctx.tenantId)
      if (!proof)
        return outcome(
          false,
          null,
          'the tenant has no legacy proof (which records may be unkeyed): its proof row was removed',
        )
      if (proof.mac === null || proof.key_id === null)
        return outcome(false, null, "the tenant's legacy proof was never sealed with the chain key")
      if (!legacyProofValid(ctx.tenantId, proof.legacy_seq, proof.key_id, proof.mac, keys)) {
        return outcome(
          false,
          null,
          "the tenant's legacy proof does not match its MAC under the chain key (altered, or made with a key this service does not have)",
        )
      }
      const legacySeq = proof.legacy_seq
      for (;;) {
        await longReadTurn()
        const rows = await repo.auditChainBatch(db, ctx.tenantId, afterSeq, EXPORT_BATCH)
        for (const row of rows) {
          const { hash, ...content } = row
          const problem =
            row.seq !== afterSeq + 1
              ? `record ${row.id} has sequence ${row.seq} where ${afterSeq + 1} was due: a record is missing or out of place`
              : row.prev_hash !== prevHash
                ? `record ${row.id} does not link to the record before it`
                : // Unkeyed records only ever precede keyed ones, and only up to the sequence the tenant's proof allows.
                  row.chain_key_id === null && (checked > unkeyed || legacySeq === null || row.seq > legacySeq)
                  ? `record ${row.id} is unkeyed (plain SHA-256) but the tenant's legacy proof allows unkeyed records ${legacySeq === null ? 'nowhere' : `only up to sequence ${legacySeq}`}`
                  : auditHash(content, keys) !== hash
                    ? `record ${row.id} does not match its hash${row.chain_key_id !== null && !keys.chainKeys.has(row.chain_key_id) ? ' (it names a chain key this service does not have)' : ''}`
                    : undefined
          if (problem !== undefined) {
            if (checkpoint && row.seq <= checkpoint.sequence) matched = false
            return outcome(false, row.id, problem)
          }
          if (row.chain_key_id === null) unkeyed += 1
          if (checkpoint?.sequence === row.seq) matched = hash === checkpoint.head
          checked += 1
          afterSeq = row.seq
          prevHash = hash
        }
        if (rows.length < EXPORT_BATCH) break
      }
      // A checkpoint beyond the end: records were removed since it was signed.
      if (checkpoint && matched === undefined) matched = checkpoint.sequence === 0 && checkpoint.head === GENESIS_HASH
      // Records removed from the end would leave a shorter, still consistent chain: compare with the tenant's head.
      const head = await repo.auditChainHead(db, ctx.tenantId)
      if (head && (head.audit_seq !== afterSeq || head.audit_head !== prevHash)) {
        return outcome(
          false,
          null,
          `the chain ends at sequence ${afterSeq} but the tenant's head is at ${head.audit_seq} with another hash: records were removed or the head moved`,
        )
      }
      return outcome(true, null)
    },

    /**
     * A signed statement of the tenant's chain head now. Signed only when the newest record's hash recomputes under
     * the chain key, so a head reset in the database is never certified.
     */
    async checkpoint(ctx: Ctx): Promise<AuditCheckpoint> {
      const keys = deps.database.audit.keys
      const head = await repo.auditChainHead(db, ctx.tenantId)
      if (!head) throw notFound('tenant', ctx.tenantId)
      if (head.audit_seq > 0) {
        const [row] = await repo.auditChainBatch(db, ctx.tenantId, head.audit_seq - 1, 1)
        const genuine =
          row &&
          row.seq === head.audit_seq &&
          row.hash === head.audit_head &&
          auditHash((({ hash: _h, ...content }) => content)(row), keys) === row.hash
        if (!genuine)
          throw new AppError(
            'conflict',
            'the newest audit record does not match the chain head; run /audit_logs/verify',
          )
      }
      const statement: Checkpoint = {
        tenant: ctx.tenantId,
        sequence: head.audit_seq,
        head: head.audit_head,
        signed_at: new Date().toISOString(),
      }
      const signed = { ...statement, signature: signCheckpoint(statement, keys), key_id: keys.signing.keyId }
      return { ...signed, token: Buffer.from(JSON.stringify(signed)).toString('base64url') }
    },

    publicKey(): AuditPublicKey {
      const { signing } = deps.database.audit.keys
      return {
        algorithm: 'Ed25519',
        key_id: signing.keyId,
        public_key: signing.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      }
    },

    async get(ctx: Ctx, id: string): Promise<AuditLog> {
      const row = await repo.findAuditLog(db, ctx.tenantId, id)
      if (!row) throw notFound('audit log', id)
      return toAuditLog(row)
    },
  }
}

/**
 * Seals the legacy proofs a migration just recorded (audit_legacy_proofs rows without a MAC) with the chain key.
 * Only the start that applied that migration calls it: a row unsealed later was not written by the migration.
 */
export async function sealLegacyProofs(db: Database['db'], keys: AuditKeys): Promise<number> {
  const pending = await db
    .selectFrom('audit_legacy_proofs')
    .select(['tenant_id', 'legacy_seq'])
    .where('mac', 'is', null)
    .execute()
  for (const row of pending) {
    await db
      .updateTable('audit_legacy_proofs')
      .set(legacyProof(row.tenant_id, row.legacy_seq, keys))
      .where('tenant_id', '=', row.tenant_id)
      .where('mac', 'is', null)
      .execute()
  }
  return pending.length
}

/** A checkpoint token back to its statement, refused (422) unless this service signed it for this tenant. */
function readCheckpoint(token: string, ctx: Ctx, keys: AuditKeys): Checkpoint {
  const refuse = (message: string) =>
    new AppError('validation_failed', `checkpoint: ${message}`, [{ field: 'checkpoint', message }])
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>
  } catch {
    throw refuse('is not a checkpoint token')
  }
  const { tenant, sequence, head, signed_at, signature, key_id } = parsed ?? {}
  if (
    typeof tenant !== 'string' ||
    !Number.isInteger(sequence) ||
    typeof head !== 'string' ||
    typeof signed_at !== 'string' ||
    typeof signature !== 'string'
  ) {
    throw refuse('is not a checkpoint token')
  }
  if (tenant !== ctx.tenantId) throw refuse('was signed for another tenant')
  if (key_id !== keys.signing.keyId)
    throw refuse('was signed with another signing key; check its signature with that key’s public key')
  const statement: Checkpoint = { tenant, sequence: sequence as number, head, signed_at }
  if (!checkpointSignatureValid(statement, signature, keys)) throw refuse('has an invalid signature')
  return statement
}

/** A list query's filter, and the keyset of its page. */
function pageOf({ page_limit, page_after, sort, ...filter }: AuditLogListQuery) {
  return { filter, ks: keyset({ page_limit, page_after, sort }, repo.AUDIT_SORT_COLUMNS) }
}

/**
 * Long reads (exports and verifications, of every tenant) take turns: each batch waits for its own turn of the
 * event loop, one batch a turn however many run, so a request waits behind one batch, not one per running read.
 */
let lastTurn: Promise<void> = Promise.resolve()
function longReadTurn(): Promise<void> {
  lastTurn = lastTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)))
  return lastTurn
}

export function toAuditLog(row: AuditLogRow): AuditLog {
  return {
    id: row.id,
    created_at: row.created_at,
    action: row.action,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    resource_name: row.resource_name,
    sub_object_type: row.sub_object_type,
    sub_object_id: row.sub_object_id,
    sub_object_name: row.sub_object_name,
    use_case_id: row.use_case_id,
    actor: { type: row.actor_type as AuditLog['actor']['type'], id: row.actor_id, name: row.actor_name },
    source: row.source as AuditLog['source'],
    request_id: row.request_id,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as AuditLog['changes']),
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as AuditLog['metadata']),
  }
}
