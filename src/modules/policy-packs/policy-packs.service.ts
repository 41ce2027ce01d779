import { isUniqueViolation } from '../../db/create-db.js'
import type { PolicyControlVersionRow, PolicyPackRow } from '../../db/tables.js'
import { conflict, type FieldError, invalidFields, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { type AuditEntry, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { derive, ID, latest, name, plain, stored, TIME, unaudited } from '../../shared/fields.js'
import { findBaseByKey, findVersionByKey } from '../policy-controls/policy-controls.service.js'
import * as repo from './policy-packs.repo.js'
import type { PolicyPack, PolicyPackCreate, PolicyPackListQuery } from './policy-packs.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { findPackByKey, packControls } from './policy-packs.repo.js'

export type PolicyPacksService = ReturnType<typeof createPolicyPacksService>

const PACK_ID = /^pp_[0-9a-z]{26}$/

// A pack is written once; its created record lists key, version and name (the controls go in its metadata).
const fields = derive<PolicyPackRow, PolicyPack, PolicyPackCreate, object>({
  id: ID,
  key: plain(),
  // The next number for the key, counted by the create.
  version: stored({ audited: true }),
  latest,
  name,
  description: unaudited(plain()),
  // From the pack's link table: set by withControls.
  controls: () => ({ read: () => [], audited: false, listed: false }),
  created_at: TIME,
  updated_at: TIME,
})

export function createPolicyPacksService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: PolicyPackListQuery): Promise<Page<PolicyPack>> {
      const ks = keyset(query, repo.PACK_SORT_COLUMNS)
      const page = toPage(await repo.listPacks(db, ctx.tenantId, query, ks), ks, (row) => row)
      return { ...page, items: await withControls(db, ctx.tenantId, page.items) }
    },

    /** By key (the latest version, or `version`), or by a pp_ id. */
    async get(ctx: Ctx, keyOrId: string, version?: number): Promise<PolicyPack> {
      const row =
        PACK_ID.test(keyOrId) && version === undefined
          ? await repo.findPack(db, ctx.tenantId, keyOrId)
          : await repo.findPackByKey(db, ctx.tenantId, keyOrId, version)
      if (!row) throw notFound('policy pack', version === undefined ? keyOrId : `${keyOrId} version ${version}`)
      return (await withControls(db, ctx.tenantId, [row]))[0]
    },

    async create(ctx: Ctx, input: PolicyPackCreate): Promise<PolicyPack> {
      try {
        return await runMutation(database, ctx, async (tx) => {
          const { row, audit } = await publishPackVersion(tx, ctx, input)
          return { result: (await withControls(tx, ctx.tenantId, [row]))[0], audit }
        })
      } catch (err) {
        throw isUniqueViolation(err)
          ? conflict(`another version of policy pack "${input.key}" was created at the same time; retry`)
          : err
      }
    },
  }
}

/**
 * Inserts the next version of a pack, every control resolved to a published version
 * (the latest when none is given). Shared with the starter library.
 */
export async function publishPackVersion(
  tx: Tx,
  ctx: Ctx,
  input: PolicyPackCreate,
): Promise<{ row: PolicyPackRow; audit: AuditEntry }> {
  const resolved = await resolveControls(tx, ctx.tenantId, input.controls)
  const at = now()
  const row: PolicyPackRow = {
    id: newId('pp'),
    tenant_id: ctx.tenantId,
    ...(fields.createColumns(input, ctx) as Pick<
      PolicyPackRow,
      'key' | 'latest' | 'name' | 'name_key' | 'description'
    >),
    version: (await repo.latestPackVersion(tx, ctx.tenantId, input.key)) + 1,
    created_at: at,
    updated_at: at,
  }
  await repo.insertPack(
    tx,
    row,
    resolved.map((v, position) => ({
      tenant_id: ctx.tenantId,
      policy_pack_id: row.id,
      position,
      control_key: v.key,
      control_version: v.version,
      control_version_id: v.id,
    })),
  )
  return {
    row,
    audit: {
      action: 'policy_pack.created',
      resourceType: 'policy_pack',
      resourceId: row.id,
      resourceName: `${row.key} v${row.version}`,
      changes: createdChanges(fields.toItem(row), fields.audited),
      metadata: { controls: resolved.map((v) => `${v.key}@${v.version}`) },
    },
  }
}

async function resolveControls(
  tx: Tx,
  tenantId: string,
  controls: PolicyPackCreate['controls'],
): Promise<PolicyControlVersionRow[]> {
  const errors: FieldError[] = []
  const resolved: PolicyControlVersionRow[] = []
  const seen = new Set<string>()
  for (const [i, ref] of controls.entries()) {
    if (seen.has(ref.key)) {
      errors.push({ field: `controls/${i}/key`, message: `control "${ref.key}" is listed twice` })
      continue
    }
    seen.add(ref.key)
    const base = await findBaseByKey(tx, tenantId, ref.key)
    if (!base) {
      errors.push({ field: `controls/${i}/key`, message: `no policy control has key "${ref.key}"` })
      continue
    }
    const version = ref.version ?? base.latest_version
    if (version === null) {
      errors.push({ field: `controls/${i}/key`, message: `control "${ref.key}" has no published version` })
      continue
    }
    if ((ref.version === undefined || ref.version === null) && base.archived === 1) {
      errors.push({
        field: `controls/${i}/key`,
        message: `control "${ref.key}" is archived; name a version to include it anyway`,
      })
      continue
    }
    const row = await findVersionByKey(tx, tenantId, ref.key, version)
    if (!row) errors.push({ field: `controls/${i}/version`, message: `control "${ref.key}" has no version ${version}` })
    else if (row.status !== 'published')
      errors.push({
        field: `controls/${i}/version`,
        message: `control "${ref.key}" version ${version} is a draft; publish it first`,
      })
    else resolved.push(row)
  }
  if (errors.length > 0) throw invalidFields(errors)
  return resolved
}

async function withControls(db: Tx, tenantId: string, rows: PolicyPackRow[]): Promise<PolicyPack[]> {
  const controls = await repo.packControls(
    db,
    tenantId,
    rows.map((r) => r.id),
  )
  return rows.map((row) => ({
    ...fields.toItem(row),
    controls: controls
      .filter((c) => c.policy_pack_id === row.id)
      .map((c) => ({
        key: c.control_key,
        version: c.control_version,
        control_version_id: c.control_version_id,
        name: c.name,
      })),
  }))
}
