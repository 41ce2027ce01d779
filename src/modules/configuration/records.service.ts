import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import * as tar from 'tar-stream'
import type { Database } from '../../db/create-db.js'
import { invalid } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Tx } from '../../shared/mutation.js'
import { emailKey } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import { readContent } from '../evidence/evidence.content.js'
import type { EvidenceService } from '../evidence/evidence.service.js'
import type { ModelsService } from '../models/models.service.js'
import type { QuestionnairesService } from '../questionnaires/questionnaires.service.js'
import type { RelationshipsService } from '../relationships/relationships.service.js'
import type { UseCasePoliciesService } from '../use-case-policies/use-case-policies.service.js'
import type { UseCasesService } from '../use-cases/use-cases.service.js'
import type { VendorsService } from '../vendors/vendors.service.js'
import { DOCUMENT_ENTRY, recordBatches } from './records.archive.js'
import {
  blobPage,
  evidenceKeyWhere,
  evidencePage,
  findEvidenceByKey,
  findNamed,
  findNamedMany,
  namedPage,
  renderEvidence,
  renderModels,
  renderUseCases,
  renderVendors,
} from './records.repo.js'
import {
  type EvidenceRecord,
  type ModelRecord,
  RECORD_KINDS,
  type RecordChange,
  type RecordKind,
  type RecordOwner,
  type RecordsPlan,
  type UseCaseRecord,
  type VendorRecord,
} from './records.schemas.js'

type Obj = Record<string, unknown>
type AnyRecord = VendorRecord | ModelRecord | EvidenceRecord | UseCaseRecord

/** The answers a use case's create takes at most (UseCaseCreate's `questions`). */
const CREATE_ANSWERS = 1000

/** The record changes a plan lists; the summary counts them all. */
export const PLAN_LISTED_CHANGES = 1000

/** The services a records apply goes through. */
export interface RecordServices {
  useCases: UseCasesService
  models: ModelsService
  vendors: VendorsService
  relationships: RelationshipsService
  questionnaires: QuestionnairesService
  useCasePolicies: UseCasePoliciesService
  evidence: EvidenceService
}

/** Each record of a kind, rendered canonically, page by page in natural-key order. */
export async function* tenantRecords(db: Tx, tenantId: string, kind: RecordKind): AsyncGenerator<AnyRecord[]> {
  if (kind === 'evidence') {
    let after: [string, string, string] | null = null
    let last: string | null = null
    for (;;) {
      const rows = await evidencePage(db, tenantId, after)
      if (rows.length === 0) return
      const page = rows.map(renderEvidence).filter((r) => {
        // Two pieces of evidence with the same content and title are one record.
        const dup = r.key === last
        last = r.key
        return !dup
      })
      yield page
      const end = rows[rows.length - 1]
      after = [end.sha256 ?? end.url ?? '', end.title ?? '', end.id]
    }
  }
  const table = kind === 'use_cases' ? 'use_cases' : kind
  let after: string | null = null
  for (;;) {
    const rows: { name_key: string }[] = await namedPage(db, tenantId, table, after)
    if (rows.length === 0) return
    yield await render(db, tenantId, kind, rows as never)
    after = rows[rows.length - 1].name_key
  }
}

function render(db: Tx, tenantId: string, kind: RecordKind, rows: never[]): Promise<AnyRecord[]> {
  if (kind === 'vendors') return renderVendors(db, tenantId, rows)
  if (kind === 'models') return renderModels(db, tenantId, rows)
  return renderUseCases(db, tenantId, rows)
}

type Had = { id: string; record: AnyRecord }

/** The tenant's records of this kind with the natural keys of `records`, rendered, by natural key. */
async function tenantRecordsFor(db: Tx, tenantId: string, kind: RecordKind, records: AnyRecord[]) {
  const found = new Map<string, Had>()
  if (kind === 'evidence') {
    for (const record of records) {
      const row = await findEvidenceByKey(db, tenantId, record as EvidenceRecord)
      if (row) found.set(lookupKey(kind, record), { id: row.id, record: renderEvidence(row) })
    }
    return found
  }
  const rows = await findNamedMany(
    db,
    tenantId,
    kind,
    records.map((r) => (r as VendorRecord).name),
  )
  const rendered = await render(db, tenantId, kind, rows as never[])
  rows.forEach((row, i) => {
    found.set(lookupKey(kind, rendered[i]), { id: row.id, record: rendered[i] })
  })
  return found
}

/** Records of a kind looked up in the tenant at a time. */
const LOOKUP_BATCH = 100

const lookupKey = (kind: RecordKind, record: AnyRecord) =>
  kind === 'evidence' ? (record as EvidenceRecord).key : nameKey((record as VendorRecord).name)

/** Each record of a kind in the bundle, with the tenant's record of its natural key (looked up a batch at a time). */
async function* withTenantRecords(db: Tx, tenantId: string, path: string, kind: RecordKind) {
  for await (const batch of recordBatches<AnyRecord>(path, kind, LOOKUP_BATCH)) {
    const had = await tenantRecordsFor(
      db,
      tenantId,
      kind,
      batch.map((b) => b.record),
    )
    for (const { record, at } of batch) yield { record, at, had: had.get(lookupKey(kind, record)) }
  }
}

/** The top-level fields whose values differ. */
const changedFields = (before: Obj, after: Obj) =>
  Object.keys(after).filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]))

const naturalKey = (kind: RecordKind, record: AnyRecord) =>
  kind === 'evidence' ? (record as EvidenceRecord).key : (record as VendorRecord).name

/** A fingerprint of the tenant's records (every rendered record, in order): what a plan of a bundle pins. */
export async function recordsFingerprint(db: Tx, tenantId: string): Promise<string> {
  const hash = createHash('sha256')
  for (const kind of RECORD_KINDS)
    for await (const page of tenantRecords(db, tenantId, kind))
      for (const record of page) hash.update(`${kind}\n${JSON.stringify(record)}\n`)
  return hash.digest('hex')
}

/** The bundle: the document, the records as NDJSON a page per entry, the evidence files, written as read. */
export function exportBundle(database: Database, tenantId: string, document: string): Readable {
  const pack = tar.pack()
  const entry = async (name: string, data: Buffer | (() => Readable), size: number) => {
    const sink = pack.entry({ name, size, mode: 0o644, mtime: new Date(0) })
    await pipeline(typeof data === 'function' ? data() : Readable.from([data]), sink as never)
  }
  const write = async () => {
    await entry(DOCUMENT_ENTRY, Buffer.from(document), Buffer.byteLength(document))
    for (const kind of RECORD_KINDS) {
      let n = 0
      for await (const page of tenantRecords(database.db, tenantId, kind)) {
        if (page.length === 0) continue
        const text = Buffer.from(page.map((r) => `${JSON.stringify(r)}\n`).join(''))
        n++
        await entry(`records/${kind}/${String(n).padStart(6, '0')}.ndjson`, text, text.length)
      }
    }
    let after: string | null = null
    for (;;) {
      const blobs = await blobPage(database.db, tenantId, after)
      if (blobs.length === 0) break
      for (const blob of blobs) {
        const size = Number(blob.size)
        await entry(
          `files/${blob.sha256}`,
          size === 0 ? Buffer.alloc(0) : () => readContent(database.db, tenantId, blob, 0, size - 1),
          size,
        )
      }
      after = blobs[blobs.length - 1].sha256
    }
    pack.finalize()
  }
  write().catch((err) => pack.destroy(err))
  return pack as unknown as Readable
}

/** What applying the bundle's records would do, each looked up in the tenant by its natural key. */
export async function planRecords(db: Tx, tenantId: string, path: string, files: number): Promise<RecordsPlan> {
  const summary = { create: 0, update: 0, unchanged: 0, files }
  const changes: RecordChange[] = []
  for (const kind of RECORD_KINDS) {
    for await (const { record, had } of withTenantRecords(db, tenantId, path, kind)) {
      const key = naturalKey(kind, record)
      const fields = had ? changedFields(had.record as Obj, record as Obj) : []
      const action = !had ? 'create' : fields.length > 0 ? 'update' : 'unchanged'
      summary[action]++
      if (action !== 'unchanged' && changes.length < PLAN_LISTED_CHANGES)
        changes.push({ kind, key, action, ...(action === 'update' && { fields }) })
    }
  }
  return { summary, changes }
}

/** The content a bundle brought, stored but not yet adopted by evidence: sha256 → blob. */
export type StoredFiles = Map<string, { blobId: string; size: number; adopted: boolean }>

/**
 * Applies the bundle's records through the families' services, inside the enclosing mutation: creates what the
 * tenant lacks, updates what differs, adds missing links, attachments, packs and evidence links (never removes).
 */
export async function applyRecords(
  s: RecordServices,
  tx: Tx,
  ctx: Ctx,
  path: string,
  files: StoredFiles,
): Promise<void> {
  const lookups = await referenceMaps(tx, ctx.tenantId)
  const ref = lookups.refs
  for (const kind of RECORD_KINDS) {
    for await (const { record, at, had } of withTenantRecords(tx, ctx.tenantId, path, kind)) {
      if (had && changedFields(had.record as Obj, record as Obj).length === 0) continue
      try {
        if (kind === 'evidence') await applyEvidence(s, tx, ctx, record as EvidenceRecord, files)
        else if (kind === 'vendors') await applyVendor(s, ctx, ref, record as VendorRecord, had?.id)
        else if (kind === 'models') await applyModel(s, tx, ctx, ref, record as ModelRecord, had)
        else await applyUseCase(s, tx, ctx, ref, record as UseCaseRecord, had)
      } catch (err) {
        if (err instanceof Error && 'code' in err && 'detail' in err) {
          ;(err as { detail: string }).detail =
            `${at} (${kind} ${naturalKey(kind, record)}): ${(err as { detail: string }).detail}`
        }
        throw err
      }
    }
  }
}

interface Refs {
  owner(owner: RecordOwner, at: string): { owner_id: string; owner_type: 'user' | 'team' } | null
  customFields(values: Record<string, unknown>, at: string): { custom_field_id: string; value: unknown }[]
  id(tx: Tx, kind: 'models' | 'vendors' | 'evidence', key: string, at: string): Promise<string>
}

/** Users, teams and custom fields (configuration, bounded) by natural key; records looked up as needed. */
async function referenceMaps(tx: Tx, tenantId: string): Promise<{ refs: Refs }> {
  const [users, teams, fields] = await Promise.all([
    tx.selectFrom('users').select(['id', 'email_key']).where('tenant_id', '=', tenantId).execute(),
    tx.selectFrom('teams').select(['id', 'name_key']).where('tenant_id', '=', tenantId).execute(),
    tx.selectFrom('custom_fields').select(['id', 'name_key']).where('tenant_id', '=', tenantId).execute(),
  ])
  const userIds = new Map(users.map((u) => [u.email_key, u.id]))
  const teamIds = new Map(teams.map((t) => [t.name_key, t.id]))
  const fieldIds = new Map(fields.map((f) => [f.name_key, f.id]))
  return {
    refs: {
      owner(owner, at) {
        if (owner === null) return null
        if ('email' in owner) {
          const id = userIds.get(emailKey(owner.email))
          if (!id) throw invalid(`${at}/owner`, `no user ${owner.email} in the document or the tenant`)
          return { owner_id: id, owner_type: 'user' }
        }
        const id = teamIds.get(nameKey(owner.team))
        if (!id) throw invalid(`${at}/owner`, `no team "${owner.team}" in the document or the tenant`)
        return { owner_id: id, owner_type: 'team' }
      },
      customFields(values, at) {
        return Object.entries(values).map(([name, value]) => {
          const id = fieldIds.get(nameKey(name))
          if (!id) throw invalid(`${at}/custom_fields`, `no custom field "${name}" in the document or the tenant`)
          return { custom_field_id: id, value }
        })
      },
      async id(db, kind, key, at) {
        if (kind === 'evidence') {
          const row = await db
            .selectFrom('evidence')
            .select(['id', 'sha256', 'url', 'title'])
            .where('tenant_id', '=', tenantId)
            .where(evidenceKeyWhere(key))
            .orderBy('id')
            .executeTakeFirst()
          if (!row) throw invalid(at, `no evidence "${key}" in the bundle or the tenant`)
          return row.id
        }
        const row = await findNamed(db, tenantId, kind, key)
        if (!row) throw invalid(at, `no ${kind === 'models' ? 'model' : 'vendor'} "${key}" in the bundle or the tenant`)
        return row.id
      },
    },
  }
}

async function applyEvidence(s: RecordServices, tx: Tx, ctx: Ctx, record: EvidenceRecord, files: StoredFiles) {
  if (record.kind === 'link') {
    await s.evidence.createLink(ctx, { kind: 'link', url: record.url ?? '', title: record.title ?? record.url ?? '' })
    return
  }
  const sha = record.sha256 ?? ''
  const stored = files.get(sha)
  await s.evidence.importFile(tx, ctx, {
    sha256: sha,
    blobId: stored?.blobId ?? null,
    size: stored?.size ?? record.size ?? 0,
    fileName: record.file_name ?? record.title ?? sha,
    contentType: record.content_type ?? 'application/octet-stream',
    title: record.title,
  })
  if (stored) stored.adopted = true
}

const governedInput = (ref: Refs, record: VendorRecord | ModelRecord | UseCaseRecord, at: string) => ({
  owner: ref.owner(record.owner, at),
  custom_fields: ref.customFields(record.custom_fields, at),
})

async function applyVendor(s: RecordServices, ctx: Ctx, ref: Refs, record: VendorRecord, id?: string) {
  const { owner: _o, custom_fields: _c, ...plain } = record
  const input = { ...plain, ...governedInput(ref, record, record.name) }
  if (id) await s.vendors.update(ctx, id, input as never)
  else await s.vendors.create(ctx, input as never)
}

async function applyModel(
  s: RecordServices,
  tx: Tx,
  ctx: Ctx,
  ref: Refs,
  record: ModelRecord,
  had?: { id: string; record: AnyRecord },
) {
  const { owner: _o, custom_fields: _c, vendors, ...plain } = record
  const input = { ...plain, ...governedInput(ref, record, record.name) }
  const id = had
    ? (await s.models.update(ctx, had.id, input as never)).id
    : (await s.models.create(ctx, input as never)).id
  const linked = new Set(had ? (had.record as ModelRecord).vendors.map(nameKey) : [])
  for (const vendor of vendors) {
    if (linked.has(nameKey(vendor))) continue
    await s.relationships.linkModelVendor(ctx, id, await ref.id(tx, 'vendors', vendor, `${record.name}/vendors`))
  }
}

async function applyUseCase(
  s: RecordServices,
  tx: Tx,
  ctx: Ctx,
  ref: Refs,
  record: UseCaseRecord,
  had?: { id: string; record: AnyRecord },
) {
  const at = record.name
  const { owner: _o, custom_fields: _c, models, vendors, questionnaires, policy_packs, controls, ...plain } = record
  const before = had?.record as UseCaseRecord | undefined
  const evidenceIds = async (keys: string[], where: string) => {
    const out: string[] = []
    for (const key of keys) out.push(await ref.id(tx, 'evidence', key, where))
    return out
  }
  const attachedBefore = new Set(before?.questionnaires.map((q) => q.questionnaire.split('+')[0]) ?? [])
  const newlyAttached = questionnaires.filter((q) => !attachedBefore.has(q.questionnaire.split('+')[0]))
  const input = {
    ...plain,
    ...governedInput(ref, record, at),
  }
  const answersOf = async (q: UseCaseRecord['questionnaires'][number]) => {
    const answers = []
    for (const a of q.answers) {
      answers.push({
        question_id: a.question_id,
        section_id: a.section_id,
        value: a.value,
        evidence_ids: await evidenceIds(a.evidence, `${at}/questionnaires/${q.questionnaire}`),
      })
    }
    return answers
  }
  // A new use case takes its answers in its create, as bulk imports send them, when they fit its limit.
  const answeredOnCreate = !had && questionnaires.reduce((n, q) => n + q.answers.length, 0) <= CREATE_ANSWERS
  let id: string
  if (had) {
    id = had.id
    await s.useCases.update(ctx, id, input as never)
    for (const q of newlyAttached) await s.questionnaires.attach(ctx, 'use_case', id, { key: q.questionnaire })
  } else {
    const questions = []
    if (answeredOnCreate)
      for (const q of questionnaires)
        for (const answer of await answersOf(q)) questions.push({ questionnaire_id: q.questionnaire, ...answer })
    const create = { ...input, questionnaire_ids: questionnaires.map((q) => q.questionnaire), questions }
    id = (await s.useCases.create(ctx, create as never)).id
  }
  for (const q of answeredOnCreate ? [] : questionnaires) {
    if (q.answers.length === 0) continue
    const was = before?.questionnaires.find((b) => b.questionnaire === q.questionnaire)
    if (was && JSON.stringify(was.answers) === JSON.stringify(q.answers)) continue
    await s.questionnaires.answer(ctx, 'use_case', id, q.questionnaire.split('+')[0], {
      answers: await answersOf(q),
    } as never)
  }
  const had2 = {
    models: new Set(before?.models.map(nameKey) ?? []),
    vendors: new Set(before?.vendors.map(nameKey) ?? []),
    packs: new Set(before?.policy_packs.map((p) => p.pack.split('+')[0]) ?? []),
  }
  for (const model of models)
    if (!had2.models.has(nameKey(model)))
      await s.relationships.linkUseCaseModel(ctx, id, await ref.id(tx, 'models', model, `${at}/models`))
  for (const vendor of vendors)
    if (!had2.vendors.has(nameKey(vendor)))
      await s.relationships.linkUseCaseVendor(ctx, id, await ref.id(tx, 'vendors', vendor, `${at}/vendors`))
  for (const pack of policy_packs) {
    const [key, version] = pack.pack.split('+')
    if (!had2.packs.has(key))
      await s.useCasePolicies.applyPack(ctx, id, {
        key,
        version: version ? Number(version) : null,
        due_date: pack.due_date,
      })
  }
  if (controls.length === 0) return
  const rows = await tx
    .selectFrom('use_case_controls')
    .select(['id', 'control_key', 'control_version', 'status', 'notes', 'due_date'])
    .where('tenant_id', '=', ctx.tenantId)
    .where('use_case_id', '=', id)
    .execute()
  const current = new Map(rows.map((r) => [`${r.control_key}+${r.control_version}`, r]))
  for (const control of controls) {
    const row = current.get(control.control)
    if (!row) throw invalid(`${at}/controls`, `control ${control.control} is not brought by the use case's packs`)
    const was = before?.controls.find((c) => c.control === control.control)
    if (row.status !== control.status || row.notes !== control.notes || row.due_date !== control.due_date) {
      await s.useCasePolicies.updateControl(ctx, id, row.id, {
        status: control.status,
        notes: control.notes,
        due_date: control.due_date,
      } as never)
    }
    const linked = new Set((was?.evidence ?? []).map((e) => `${e.key} ${e.requirement}`))
    for (const e of control.evidence) {
      if (linked.has(`${e.key} ${e.requirement}`)) continue
      const evidenceId = await ref.id(tx, 'evidence', e.key, `${at}/controls/${control.control}`)
      await s.useCasePolicies.linkEvidence(ctx, id, row.id, { evidence_id: evidenceId, requirement: e.requirement })
    }
  }
}
