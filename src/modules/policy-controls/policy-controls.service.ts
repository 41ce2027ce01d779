import { isUniqueViolation } from '../../db/create-db.js'
import type { PolicyControlBaseRow, PolicyControlVersionRow } from '../../db/tables.js'
import { AppError, conflict, invalid, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { auditedUpdate, type AuditEntry, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { uniqueName } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
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

const BASE_FIELDS = ['key', 'name', 'archived', 'deprecated'] as const
const VERSION_FIELDS = [
  'key',
  'version',
  'status',
  'name',
  'description',
  'evidence_requirements',
  'risk_type_ids',
  'published_at',
] as const

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
        const changes: Partial<PolicyControlBaseRow> = {}
        if (input.name !== undefined) Object.assign(changes, { name: input.name.trim(), name_key: nameKey(input.name) })
        if (input.archived !== undefined) changes.archived = input.archived ? 1 : 0
        if (input.deprecated !== undefined) changes.deprecated = input.deprecated ? 1 : 0
        const before = toBase(current)
        const after = toBase({ ...current, ...changes })
        return auditedUpdate(
          {
            before,
            after,
            fields: BASE_FIELDS,
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
        const changes: Partial<PolicyControlVersionRow> = {}
        if (input.name !== undefined) Object.assign(changes, { name: input.name.trim(), name_key: nameKey(input.name) })
        if (input.description !== undefined) changes.description = input.description
        if (input.evidence_requirements !== undefined)
          changes.evidence_requirements = JSON.stringify(evidence(input.evidence_requirements ?? []))
        if (input.risk_type_ids !== undefined) changes.risk_type_ids = JSON.stringify(input.risk_type_ids ?? [])
        const before = toVersion(current)
        const after = toVersion({ ...current, ...changes })
        return auditedUpdate(
          {
            before,
            after,
            fields: VERSION_FIELDS,
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
    name: name.trim(),
    name_key: nameKey(name),
    archived: 0,
    deprecated: 0,
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
    name: content.name.trim(),
    name_key: nameKey(content.name),
    description: content.description,
    evidence_requirements: JSON.stringify(evidence(content.evidence_requirements)),
    risk_type_ids: JSON.stringify(content.risk_type_ids),
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
      changes: createdChanges(created, VERSION_FIELDS),
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

export function toBase(row: PolicyControlBaseRow): PolicyControlBase {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    archived: row.archived === 1,
    deprecated: row.deprecated === 1,
    latest_version: row.latest_version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

export function toVersion(row: PolicyControlVersionRow): PolicyControlVersion {
  return {
    id: row.id,
    base_id: row.base_id,
    key: row.key,
    version: row.version,
    status: row.status as PolicyControlVersion['status'],
    name: row.name,
    description: row.description,
    evidence_requirements: JSON.parse(row.evidence_requirements) as EvidenceRequirement[],
    risk_type_ids: JSON.parse(row.risk_type_ids) as string[],
    published_at: row.published_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

function toControl(row: repo.PublishedControlRow): PolicyControl {
  return {
    id: row.id,
    version_id: row.version_id,
    key: row.key,
    version: row.version,
    name: row.name,
    description: row.description,
    evidence_requirements: JSON.parse(row.evidence_requirements) as EvidenceRequirement[],
    risk_type_ids: JSON.parse(row.risk_type_ids) as string[],
    deprecated: row.deprecated === 1,
    published_at: row.published_at ?? row.updated_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
