import { isUniqueViolation } from '../../db/create-db.js'
import type { PolicyControlBaseRow, PolicyControlVersionRow } from '../../db/tables.js'
import { AppError, conflict, invalid, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { auditedUpdate, type AuditEntry, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { derive, type FieldOf, flag, ID, list, name, plain, stored, TIME } from '../../shared/fields.js'
import { uniqueName } from '../../shared/records.js'
import * as repo from './policy-controls.repo.js'
import type {
  EvidenceRequirement,
  PolicyControl,
  PolicyControlBase,
  PolicyControlBaseCreate,
  PolicyControlBaseListQuery,
  PolicyControlBaseUpdate,
  PolicyControlListQuery,
  PolicyControlVersion,
  PolicyControlVersionCreate,
  PolicyControlVersionListQuery,
  PolicyControlVersionUpdate,
} from './policy-controls.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { findBaseByKey, findVersionByKey } from './policy-controls.repo.js'

export type PolicyControlsService = ReturnType<typeof createPolicyControlsService>

const baseFields = derive<PolicyControlBaseRow, PolicyControlBase, { name: string }, PolicyControlBaseUpdate>({
  id: ID,
  // Set once by the create, never by a PATCH.
  key: stored({ audited: true }),
  name,
  archived: flag({ default: false }),
  deprecated: flag({ default: false }),
  // Moved forward by publishing a version.
  latest_version: stored(),
  created_at: TIME,
  updated_at: TIME,
})

/** Evidence requirements as JSON text, each with `required` made explicit (true unless said). */
const evidenceList: FieldOf = (key) => ({
  read: (row) => JSON.parse(row[key] as string),
  create: (value) => ({ [key]: JSON.stringify(evidence((value as VersionContent['evidence_requirements']) ?? [])) }),
  update: (value) => ({ [key]: JSON.stringify(evidence((value as VersionContent['evidence_requirements']) ?? [])) }),
  audited: true,
  listed: false,
})

const versionFields = derive<PolicyControlVersionRow, PolicyControlVersion, VersionContent, PolicyControlVersionUpdate>(
  {
    id: ID,
    base_id: stored(),
    // The base's key and the version number are set by the create; status and published_at by publishing.
    key: stored({ audited: true }),
    version: stored({ audited: true }),
    status: stored({ audited: true }),
    name,
    description: plain(),
    evidence_requirements: evidenceList,
    risk_type_ids: list(),
    published_at: stored({ audited: true }),
    created_at: TIME,
    updated_at: TIME,
  },
)

const controlFields = derive<repo.PublishedControlRow, PolicyControl, object, object>({
  id: ID,
  version_id: stored(),
  key: stored(),
  version: stored(),
  name: stored(),
  description: stored(),
  evidence_requirements: evidenceList,
  risk_type_ids: list(),
  deprecated: flag({ default: false }),
  // The column is nullable: a control without a publishing time shows its last update.
  published_at: (key) => ({ read: (row) => row[key] ?? row.updated_at, audited: false, listed: false }),
  created_at: TIME,
  updated_at: TIME,
})

export function createPolicyControlsService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    // --- bases ---

    async listBases(ctx: Ctx, query: PolicyControlBaseListQuery): Promise<Page<PolicyControlBase>> {
      const ks = keyset(query, repo.BASE_SORT_COLUMNS)
      return toPage(await repo.listBases(db, ctx.tenantId, query, ks), ks, toBase)
    },

    async getBase(ctx: Ctx, id: string): Promise<PolicyControlBase> {
      const row = await repo.findBase(db, ctx.tenantId, id)
      if (!row) throw notFound('policy control base', id)
      return toBase(row)
    },

    async createBase(ctx: Ctx, input: PolicyControlBaseCreate): Promise<PolicyControlBase> {
      return uniqueName(
        db,
        ctx,
        { table: 'policy_control_bases', what: 'policy control', field: 'key' },
        input.key,
        () =>
          runMutation(database, ctx, async (tx) => {
            const { row, audit } = await newBase(tx, ctx, input.key, input.name)
            return { result: toBase(row), audit }
          }),
      )
    },

    async updateBase(ctx: Ctx, id: string, input: PolicyControlBaseUpdate): Promise<PolicyControlBase> {
      return runMutation(database, ctx, async (tx) => {
        const current = await repo.findBase(tx, ctx.tenantId, id)
        if (!current) throw notFound('policy control base', id)
        const changes: Partial<PolicyControlBaseRow> = baseFields.updateColumns(input, ctx)
        const before = toBase(current)
        const after = toBase({ ...current, ...changes })
        return auditedUpdate(
          {
            before,
            after,
            fields: baseFields.audited,
            audit: {
              action: 'policy_control_base.updated',
              resourceType: 'policy_control_base',
              resourceId: id,
              resourceName: after.key,
            },
          },
          async (updatedAt) => {
            await repo.updateBase(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
          },
        )
      })
    },

    // --- versions ---

    async listVersions(ctx: Ctx, query: PolicyControlVersionListQuery): Promise<Page<PolicyControlVersion>> {
      const ks = keyset(query)
      return toPage(await repo.listVersions(db, ctx.tenantId, query, ks), ks, toVersion)
    },

    async getVersion(ctx: Ctx, id: string): Promise<PolicyControlVersion> {
      const row = await repo.findVersion(db, ctx.tenantId, id)
      if (!row) throw notFound('policy control version', id)
      return toVersion(row)
    },

    async createVersion(ctx: Ctx, input: PolicyControlVersionCreate): Promise<PolicyControlVersion> {
      try {
        return await runMutation(database, ctx, async (tx) => {
          const base = await resolveBase(tx, ctx.tenantId, input)
          await checkRiskTypes(tx, ctx.tenantId, input.risk_type_ids ?? [])
          const { row, audit } = await newVersion(tx, ctx, base, {
            name: input.name ?? base.name,
            description: input.description ?? null,
            evidence_requirements: input.evidence_requirements ?? [],
            risk_type_ids: input.risk_type_ids ?? [],
          })
          return { result: toVersion(row), audit }
        })
      } catch (err) {
        // Two drafts numbered at once: the unique (base, version) index stops the second.
        throw isUniqueViolation(err)
          ? conflict('another version of this control was created at the same time; retry')
          : err
      }
    },

    async updateVersion(ctx: Ctx, id: string, input: PolicyControlVersionUpdate): Promise<PolicyControlVersion> {
      return runMutation(database, ctx, async (tx) => {
        const current = await repo.findVersion(tx, ctx.tenantId, id)
        if (!current) throw notFound('policy control version', id)
        if (current.status !== 'draft') throw publishedIsImmutable(current)
        if (input.risk_type_ids) await checkRiskTypes(tx, ctx.tenantId, input.risk_type_ids)
        const changes: Partial<PolicyControlVersionRow> = versionFields.updateColumns(input, ctx)
        const before = toVersion(current)
        const after = toVersion({ ...current, ...changes })
        return auditedUpdate(
          {
            before,
            after,
            fields: versionFields.audited,
            audit: {
              action: 'policy_control_version.updated',
              resourceType: 'policy_control_version',
              resourceId: id,
              resourceName: versionName(current),
            },
          },
          async (updatedAt) => {
            await repo.updateVersion(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
          },
        )
      })
    },

    async publishVersion(ctx: Ctx, id: string): Promise<PolicyControlVersion> {
      return runMutation(database, ctx, async (tx) => {
        const current = await repo.findVersion(tx, ctx.tenantId, id)
        if (!current) throw notFound('policy control version', id)
        if (current.status !== 'draft') throw publishedIsImmutable(current)
        const { row, audit } = await publish(tx, ctx, current)
        return { result: toVersion(row), audit }
      })
    },

    // --- published controls ---

    async listControls(ctx: Ctx, query: PolicyControlListQuery): Promise<Page<PolicyControl>> {
      const ks = keyset(query, repo.CONTROL_SORT_COLUMNS)
      return toPage(await repo.listPublishedControls(db, ctx.tenantId, query, ks), ks, toControl)
    },

    async getControl(ctx: Ctx, id: string): Promise<PolicyControl> {
      const row = await repo.findPublishedControl(db, ctx.tenantId, id)
      if (!row) throw notFound('policy control', id)
      return toControl(row)
    },
  }
}

// The building blocks below are shared with the starter library, which writes the same records in its own transaction.

/** Inserts a new control base (no versions yet). */
export async function newBase(
  tx: Tx,
  ctx: Ctx,
  key: string,
  name: string,
): Promise<{ row: PolicyControlBaseRow; audit: AuditEntry }> {
  const at = now()
  const row: PolicyControlBaseRow = {
    id: newId('pcb'),
    tenant_id: ctx.tenantId,
    key,
    ...(baseFields.createColumns({ name }, ctx) as Pick<
      PolicyControlBaseRow,
      'name' | 'name_key' | 'archived' | 'deprecated'
    >),
    latest_version: null,
    created_at: at,
    updated_at: at,
  }
  await repo.insertBase(tx, row)
  const audit: AuditEntry = {
    action: 'policy_control_base.created',
    resourceType: 'policy_control_base',
    resourceId: row.id,
    resourceName: key,
    // A new base is neither archived nor deprecated: its record lists only what the caller gave.
    changes: createdChanges(toBase(row), ['key', 'name']),
  }
  return { row, audit }
}

export interface VersionContent {
  name: string
  description: string | null
  evidence_requirements: { type: EvidenceRequirement['type']; description: string; required?: boolean }[]
  risk_type_ids: string[]
}

/** Inserts the next draft version of `base`. */
export async function newVersion(
  tx: Tx,
  ctx: Ctx,
  base: PolicyControlBaseRow,
  content: VersionContent,
): Promise<{ row: PolicyControlVersionRow; audit: AuditEntry }> {
  const at = now()
  const row: PolicyControlVersionRow = {
    id: newId('pcv'),
    tenant_id: ctx.tenantId,
    base_id: base.id,
    key: base.key,
    version: (await repo.maxVersion(tx, ctx.tenantId, base.id)) + 1,
    status: 'draft',
    ...(versionFields.createColumns(content, ctx) as Pick<
      PolicyControlVersionRow,
      'name' | 'name_key' | 'description' | 'evidence_requirements' | 'risk_type_ids'
    >),
    published_at: null,
    created_at: at,
    updated_at: at,
  }
  await repo.insertVersion(tx, row)
  const created = toVersion(row)
  return {
    row,
    audit: {
      action: 'policy_control_version.created',
      resourceType: 'policy_control_version',
      resourceId: row.id,
      resourceName: versionName(row),
      changes: createdChanges(created, versionFields.audited),
      metadata: { base_id: base.id },
    },
  }
}

/** Publishes a draft and moves its base's latest_version forward. */
export async function publish(
  tx: Tx,
  ctx: Ctx,
  draft: PolicyControlVersionRow,
): Promise<{ row: PolicyControlVersionRow; audit: AuditEntry }> {
  const at = now()
  await repo.updateVersion(tx, ctx.tenantId, draft.id, { status: 'published', published_at: at, updated_at: at })
  const base = await repo.findBase(tx, ctx.tenantId, draft.base_id)
  if (base && (base.latest_version ?? 0) < draft.version) {
    await repo.updateBase(tx, ctx.tenantId, base.id, { latest_version: draft.version, updated_at: at })
  }
  const row = { ...draft, status: 'published', published_at: at, updated_at: at }
  return {
    row,
    audit: {
      action: 'policy_control_version.published',
      resourceType: 'policy_control_version',
      resourceId: draft.id,
      resourceName: versionName(draft),
      changes: { status: ['draft', 'published'], published_at: [null, at] },
      metadata: { base_id: draft.base_id },
    },
  }
}

async function resolveBase(
  tx: Tx,
  tenantId: string,
  input: { base_id?: string; key?: string },
): Promise<PolicyControlBaseRow> {
  if (input.base_id === undefined && input.key === undefined) throw invalid('base_id', 'give base_id or key')
  if (input.base_id !== undefined) {
    const base = await repo.findBase(tx, tenantId, input.base_id)
    if (!base) throw invalid('base_id', `policy control base ${input.base_id} does not exist`)
    if (input.key !== undefined && input.key !== base.key)
      throw invalid('key', `does not match the key of base ${input.base_id} ("${base.key}")`)
    return base
  }
  const base = await repo.findBaseByKey(tx, tenantId, input.key!)
  if (!base) throw invalid('key', `no policy control base has key "${input.key}"`)
  return base
}

export async function checkRiskTypes(tx: Tx, tenantId: string, ids: string[]): Promise<void> {
  const found = await repo.existingRiskTypeIds(tx, tenantId, ids)
  const missing = ids.map((id, i) => ({ id, i })).filter(({ id }) => !found.has(id))
  if (missing.length > 0) {
    throw new AppError(
      'validation_failed',
      `risk_type_ids: no risk type ${missing.map((m) => m.id).join(', ')} in this tenant`,
      missing.map(({ id, i }) => ({ field: `risk_type_ids/${i}`, message: `risk type ${id} does not exist` })),
    )
  }
}

function publishedIsImmutable(row: PolicyControlVersionRow): AppError {
  return conflict(`${versionName(row)} is published and can no longer change; create a new version instead`)
}

function evidence(list: VersionContent['evidence_requirements']): EvidenceRequirement[] {
  return list.map((e) => ({ type: e.type, description: e.description, required: e.required ?? true }))
}

const versionName = (row: { key: string; version: number }) => `${row.key} v${row.version}`

export const toBase = baseFields.toItem
export const toVersion = versionFields.toItem
const toControl = controlFields.toItem
