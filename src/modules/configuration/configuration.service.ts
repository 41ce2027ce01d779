import { conflict } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { runEnclosingMutation, type Tx } from '../../shared/mutation.js'
import { emailKey } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import type { CustomFieldsService } from '../custom-fields/custom-fields.service.js'
import type { PolicyControlsService } from '../policy-controls/policy-controls.service.js'
import type { PolicyPacksService } from '../policy-packs/policy-packs.service.js'
import type { QuestionnairesService } from '../questionnaires/questionnaires.service.js'
import type { RiskScenariosService } from '../risk-scenarios/risk-scenarios.service.js'
import type { RiskTypesService } from '../risk-types/risk-types.service.js'
import type { TeamsService } from '../teams/teams.service.js'
import type { UsersService } from '../users/users.service.js'
import type { WebhooksService } from '../webhooks/webhooks.service.js'
import type { WorkflowStagesService } from '../workflow-stages/workflow-stages.service.js'
import {
  canonicalJson,
  canonicalYaml,
  checkShape,
  documentErrors,
  type ParsedDocument,
  placed,
} from './configuration.document.js'
import {
  type Canonical,
  canonicalDocument,
  exportDocument,
  NATURAL_KEYS,
  planChanges,
  planId,
  summarize,
} from './configuration.model.js'
import { readConfiguration, type ConfigurationRows } from './configuration.repo.js'
import type { ConfigurationPlan, PlanChange } from './configuration.schemas.js'
import { checkBundle, type Spooled } from './records.archive.js'
import { checkReferences, configurationKeys } from './records.references.js'
import {
  applyRecords,
  exportBundle,
  planRecords,
  type RecordServices,
  recordsFingerprint,
  type StoredFiles,
} from './records.service.js'
import { parseYaml } from './configuration.document.js'
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'

export type ConfigurationService = ReturnType<typeof createConfigurationService>
type Obj = Record<string, unknown>

/** The families' services an apply goes through (the same objects the routes call). */
export interface Services extends RecordServices {
  riskTypes: RiskTypesService
  riskScenarios: RiskScenariosService
  workflowStages: WorkflowStagesService
  customFields: CustomFieldsService
  policyControls: PolicyControlsService
  policyPacks: PolicyPacksService
  questionnaires: QuestionnairesService
  users: UsersService
  teams: TeamsService
  webhooks: WebhooksService
}

/**
 * Configuration as code: export a tenant's configuration as a canonical document, plan a document against it,
 * apply it in one transaction through the families' own services (their checks, their audit records).
 */
export function createConfigurationService(deps: Pick<Deps, 'database' | 'config'>, services: Services) {
  const { database, config } = deps
  const bundleLimits = {
    maxBytes: config.configurationBundleMaxBytes,
    maxFiles: config.configurationBundleMaxFiles,
    maxDocumentBytes: 1024 * 1024,
  }
  /** A bundle's plan_id: the document's plan, the tenant's records and the archive's bytes together. */
  const bundlePlanId = (documentPlan: string, fingerprint: string, archive: string) =>
    `plan_${createHash('sha256').update(documentPlan).update('\0').update(fingerprint).update('\0').update(archive).digest('base64url').slice(0, 43)}`

  const current = async (db: Tx, tenantId: string) => {
    const rows = await readConfiguration(db, tenantId)
    return { rows, doc: exportDocument(rows) }
  }

  /** The document checked, in canonical form against the tenant: 422 naming every error, placed in the text. */
  const prepare = (parsed: ParsedDocument, tenant: Canonical) => {
    const doc = checkShape(parsed)
    const { desired, errors } = canonicalDocument(doc, tenant)
    if (errors.length > 0) {
      const shown = placed(parsed, errors)
      throw documentErrors(
        `the document has ${errors.length} error${errors.length === 1 ? '' : 's'}: ${shown
          .slice(0, 5)
          .map((e) => `${e.pointer} ${e.message}${e.line ? ` (line ${e.line}, column ${e.column})` : ''}`)
          .join('; ')}`,
        shown,
      )
    }
    return desired
  }

  const planOf = (tenant: Canonical, desired: Partial<Canonical>, prune: boolean): ConfigurationPlan => {
    const changes = planChanges(tenant, desired, prune)
    return { plan_id: planId(tenant, desired, prune), summary: summarize(changes), changes }
  }

  return {
    /** The tenant's configuration document (canonical: the same configuration gives the same bytes). */
    async export(ctx: Ctx, format: 'json' | 'yaml' = 'json'): Promise<string> {
      const { doc } = await current(database.db, ctx.tenantId)
      return format === 'yaml' ? canonicalYaml(doc) : canonicalJson(doc)
    },

    /** The bundle: the document (YAML), the records as NDJSON and the evidence files, streamed as read. */
    async exportBundle(ctx: Ctx): Promise<Readable> {
      const { doc } = await current(database.db, ctx.tenantId)
      return exportBundle(database, ctx.tenantId, canonicalYaml(doc))
    },

    /**
     * The plan of a bundle: its document's, and its records' (create, update, unchanged); 422 naming each reference
     * of the records that resolves neither in the document, nor in the bundle, nor in the tenant.
     */
    async planBundle(ctx: Ctx, archive: Spooled, prune = false): Promise<ConfigurationPlan> {
      const checked = await checkBundle(archive.path, bundleLimits)
      const { doc } = await current(database.db, ctx.tenantId)
      const desired = prepare(parseYaml(checked.document), doc)
      const plan = planOf(doc, desired, prune)
      await checkReferences(database.db, ctx.tenantId, archive.path, configurationKeys(doc, desired, prune))
      const records = await planRecords(database.db, ctx.tenantId, archive.path, checked.files)
      const fingerprint = await recordsFingerprint(database.db, ctx.tenantId)
      return { ...plan, plan_id: bundlePlanId(plan.plan_id, fingerprint, archive.sha256), records }
    },

    /**
     * Applies a bundle, all or nothing: its files are stored first (each checked against its sha256), then the
     * document and the records go in one transaction; on any error the stored files go too.
     */
    async applyBundle(
      ctx: Ctx,
      archive: Spooled,
      options: { prune?: boolean; planId?: string } = {},
    ): Promise<ConfigurationPlan & { applied: number }> {
      const prune = options.prune ?? false
      const files: StoredFiles = new Map()
      try {
        const checked = await checkBundle(archive.path, bundleLimits, async (sha256, stream) => {
          const stored = await services.evidence.storeImported(ctx, stream)
          files.set(sha256, { blobId: stored.blobId, size: stored.size, adopted: false })
          if (stored.sha256 !== sha256) await services.evidence.discardImported(ctx, stored.blobId)
        })
        const parsed = parseYaml(checked.document)
        const result = await runEnclosingMutation(database, ctx, async (tx) => {
          const { rows, doc } = await current(tx, ctx.tenantId)
          const desired = prepare(parsed, doc)
          const plan = planOf(doc, desired, prune)
          await checkReferences(tx, ctx.tenantId, archive.path, configurationKeys(doc, desired, prune))
          const records = await planRecords(tx, ctx.tenantId, archive.path, checked.files)
          const fingerprint = await recordsFingerprint(tx, ctx.tenantId)
          const planId = bundlePlanId(plan.plan_id, fingerprint, archive.sha256)
          if (options.planId !== undefined && options.planId !== planId) {
            throw conflict('the tenant (or the bundle) changed since this plan was made; plan again and review it')
          }
          await applyPlan(services, tx, ctx, rows, desired, plan.changes)
          await applyRecords(services, tx, ctx, archive.path, files)
          const applied =
            plan.changes.filter((c) => c.action !== 'unchanged').length +
            records.summary.create +
            records.summary.update
          return {
            result: { ...plan, plan_id: planId, records, applied },
            summary: (entries) => ({
              action: 'configuration.applied',
              resourceType: 'configuration',
              resourceId: null,
              resourceName: ctx.tenantId,
              metadata: {
                plan_id: planId,
                ...plan.summary,
                records: entries.length,
                prune,
                bundle: { create: records.summary.create, update: records.summary.update, files: checked.files },
              },
            }),
          }
        })
        for (const file of files.values()) if (!file.adopted) await services.evidence.discardImported(ctx, file.blobId)
        return result
      } catch (err) {
        for (const file of files.values()) await services.evidence.discardImported(ctx, file.blobId)
        throw err
      }
    },

    async exportDocument(ctx: Ctx): Promise<Canonical> {
      return (await current(database.db, ctx.tenantId)).doc
    },

    async plan(ctx: Ctx, parsed: ParsedDocument, prune = false): Promise<ConfigurationPlan> {
      const { doc } = await current(database.db, ctx.tenantId)
      return planOf(doc, prepare(parsed, doc), prune)
    },

    /** Applies the document in one transaction, or nothing; with a plan_id, only onto the state it was planned on. */
    async apply(
      ctx: Ctx,
      parsed: ParsedDocument,
      options: { prune?: boolean; planId?: string } = {},
    ): Promise<ConfigurationPlan & { applied: number }> {
      const prune = options.prune ?? false
      return runEnclosingMutation(database, ctx, async (tx) => {
        const { rows, doc } = await current(tx, ctx.tenantId)
        const desired = prepare(parsed, doc)
        const plan = planOf(doc, desired, prune)
        if (options.planId !== undefined && options.planId !== plan.plan_id) {
          throw conflict(
            'the tenant’s configuration (or the document) changed since this plan was made; plan again and review it',
          )
        }
        await applyPlan(services, tx, ctx, rows, desired, plan.changes)
        const applied = plan.changes.filter((c) => c.action !== 'unchanged').length
        return {
          result: { ...plan, applied },
          summary: (entries) => ({
            action: 'configuration.applied',
            resourceType: 'configuration',
            resourceId: null,
            resourceName: ctx.tenantId,
            metadata: { plan_id: plan.plan_id, ...plan.summary, records: entries.length, prune },
          }),
        }
      })
    },
  }
}

/** Carries out a plan's changes through the families' services, section by section, in the plan's order. */
async function applyPlan(
  s: Services,
  tx: Tx,
  ctx: Ctx,
  rows: ConfigurationRows,
  desired: Partial<Canonical>,
  changes: PlanChange[],
): Promise<void> {
  const ids = {
    riskTypes: new Map(rows.riskTypes.map((r) => [r.name_key, r.id])),
    scenarios: new Map(rows.scenarios.map((r) => [r.name_key, r.id])),
    stages: new Map(rows.stages.map((r) => [r.name_key, r.id])),
    customFields: new Map(rows.customFields.map((r) => [r.name_key, r.id])),
    bases: new Map(rows.bases.map((r) => [r.key, r.id])),
    versions: new Map(rows.versions.map((r) => [`${r.key}+${r.version}`, r.id])),
    users: new Map(rows.users.map((r) => [r.email_key, r.id])),
    teams: new Map(rows.teams.map((r) => [r.name_key, r.id])),
    webhooks: new Map(rows.webhooks.map((r) => [r.url, r.id])),
  }
  const members = new Map<string, Set<string>>()
  for (const m of rows.members) {
    const set = members.get(m.team_id) ?? new Set()
    set.add(m.email_key)
    members.set(m.team_id, set)
  }
  const typeIds = (names: unknown) => (names as string[]).map((n) => ids.riskTypes.get(nameKey(n))!)
  const wanted = (section: keyof typeof NATURAL_KEYS, key: string) =>
    ((desired[section] ?? []) as Obj[]).find(
      (o) => NATURAL_KEYS[section](o) === NATURAL_KEYS[section](keyObject(section, key)),
    )!
  const after = (change: PlanChange) =>
    Object.fromEntries(Object.entries(change.changes ?? {}).map(([field, c]) => [field, c.after])) as Obj

  // Deletes of stages first, so that the stages left take their places from 1.
  for (const change of changes.filter((c) => c.section === 'workflow_stages' && c.action === 'delete')) {
    await s.workflowStages.delete(ctx, ids.stages.get(nameKey(change.key))!)
  }
  await placeStages(s, tx, ctx, ids.stages, desired, changes)
  // Creates and updates in section order (what is referenced first), then deletes in the reverse order.
  const deletes = changes.filter((c) => c.action === 'delete').reverse()
  for (const change of [...changes.filter((c) => c.action !== 'delete'), ...deletes]) {
    const { section, action } = change
    if (action === 'unchanged' || (section === 'workflow_stages' && action === 'delete')) continue
    const values = after(change)
    switch (section) {
      case 'risk_types': {
        const id = ids.riskTypes.get(nameKey(change.key))
        if (action === 'create')
          ids.riskTypes.set(nameKey(change.key), (await s.riskTypes.create(ctx, values as never)).id)
        else if (action === 'update') await s.riskTypes.update(ctx, id!, values as never)
        else await s.riskTypes.delete(ctx, id!)
        break
      }
      case 'risk_scenarios': {
        const id = ids.scenarios.get(nameKey(change.key))
        const { risk_types, ...rest } = values
        const input = { ...rest, ...(risk_types !== undefined && { risk_type_ids: typeIds(risk_types) }) }
        if (action === 'create')
          ids.scenarios.set(nameKey(change.key), (await s.riskScenarios.create(ctx, input as never)).id)
        else if (action === 'update') await s.riskScenarios.update(ctx, id!, input as never)
        else await s.riskScenarios.delete(ctx, id!)
        break
      }
      case 'workflow_stages':
        break
      case 'custom_fields': {
        const id = ids.customFields.get(nameKey(change.key))
        if (action === 'create')
          ids.customFields.set(nameKey(change.key), (await s.customFields.create(ctx, values as never)).id)
        else if (action === 'update') await s.customFields.update(ctx, id!, values as never)
        else await s.customFields.delete(ctx, id!)
        break
      }
      case 'policy_controls':
      case 'policy_packs':
      case 'questionnaires': {
        const [key, version] = change.key.split('+')
        if (version === undefined) {
          await applyControlBase(s, ctx, ids, key, action, values)
          break
        }
        const source =
          change.document_version === undefined
            ? undefined
            : ((wanted(section, key).versions as Obj[]).find((v) => v.version === change.document_version) as Obj)
        if (section === 'policy_controls') await applyControlVersion(s, ctx, ids, change, source, values, typeIds)
        else if (source) {
          const { version: _v, ...content } = source
          if (section === 'policy_packs') await s.policyPacks.create(ctx, { key, ...content } as never)
          else await s.questionnaires.create(ctx, { key, ...content } as never)
        }
        break
      }
      case 'users': {
        const id = ids.users.get(emailKey(change.key))
        const input = values
        if (action === 'create') ids.users.set(emailKey(change.key), (await s.users.create(ctx, input as never)).id)
        else if (action === 'update') {
          if (Object.keys(input).length > 0) await s.users.update(ctx, id!, input as never)
        } else await s.users.delete(ctx, id!)
        break
      }
      case 'teams': {
        let id = ids.teams.get(nameKey(change.key))
        const { members: wantedMembers, ...input } = values
        if (action === 'delete') {
          await s.teams.delete(ctx, id!)
          break
        }
        if (action === 'create') id = (await s.teams.create(ctx, input as never)).id
        else if (Object.keys(input).length > 0) await s.teams.update(ctx, id!, input as never)
        if (wantedMembers === undefined) break
        const had = members.get(id!) ?? new Set<string>()
        const next = new Set(wantedMembers as string[])
        for (const email of next) if (!had.has(email)) await s.teams.addMember(ctx, id!, ids.users.get(email)!)
        for (const email of had) if (!next.has(email)) await s.teams.removeMember(ctx, id!, ids.users.get(email)!)
        break
      }
      case 'webhook_endpoints': {
        const id = ids.webhooks.get(change.key)
        if (action === 'create') await s.webhooks.create(ctx, wanted('webhook_endpoints', change.key) as never)
        else if (action === 'update') await s.webhooks.update(ctx, id!, values as never)
        else await s.webhooks.remove(ctx, id!)
        break
      }
    }
  }
}

/** Each stage of the document at its place (1, 2, …): created there, or updated and moved there. */
async function placeStages(
  s: Services,
  tx: Tx,
  ctx: Ctx,
  stageIds: Map<string, string>,
  desired: Partial<Canonical>,
  changes: PlanChange[],
): Promise<void> {
  const planned = new Map(changes.filter((c) => c.section === 'workflow_stages').map((c) => [nameKey(c.key), c]))
  for (const [i, stage] of ((desired.workflow_stages ?? []) as Obj[]).entries()) {
    const key = nameKey(String(stage.name))
    const change = planned.get(key)
    const position = i + 1
    const id = stageIds.get(key)
    if (!id) {
      stageIds.set(key, (await s.workflowStages.create(ctx, { ...stage, position } as never)).id)
      continue
    }
    const fields = Object.fromEntries(
      Object.entries(change?.changes ?? {})
        .filter(([field]) => field !== 'position')
        .map(([field, c]) => [field, c.after]),
    )
    const at = await tx
      .selectFrom('workflow_stages')
      .select('position')
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    if (Object.keys(fields).length > 0 || at.position !== position) {
      await s.workflowStages.update(ctx, id, { ...fields, ...(at.position !== position && { position }) } as never)
    }
  }
}

const keyObject = (section: keyof typeof NATURAL_KEYS, key: string): Obj =>
  section === 'users' ? { email: key } : section === 'webhook_endpoints' ? { url: key } : { name: key, key }

/** A control's base: created, or its name and flags updated. */
async function applyControlBase(
  s: Services,
  ctx: Ctx,
  ids: { bases: Map<string, string> },
  key: string,
  action: PlanChange['action'],
  values: Obj,
): Promise<void> {
  const { key: _key, name, ...flags } = values
  if (action === 'create') {
    const baseId = (await s.policyControls.createBase(ctx, { key, name: name as string })).id
    ids.bases.set(key, baseId)
    const set = Object.fromEntries(Object.entries(flags).filter(([, on]) => on === true))
    if (Object.keys(set).length > 0) await s.policyControls.updateBase(ctx, baseId, set as never)
  } else if (action === 'update') {
    await s.policyControls.updateBase(ctx, ids.bases.get(key)!, {
      ...(name !== undefined && { name }),
      ...flags,
    } as never)
  }
}

/** A new version (a draft, published when the document says so), or an update of a draft. */
async function applyControlVersion(
  s: Services,
  ctx: Ctx,
  ids: { versions: Map<string, string> },
  change: PlanChange,
  source: Obj | undefined,
  values: Obj,
  typeIds: (names: unknown) => string[],
): Promise<void> {
  const [key] = change.key.split('+')
  if (change.action === 'create' && source) {
    await newControlVersion(s, ctx, ids, key, source, typeIds)
    return
  }
  const id = ids.versions.get(change.key)!
  const { status, risk_types, ...fields } = values
  const input = { ...fields, ...(risk_types !== undefined && { risk_type_ids: typeIds(risk_types) }) }
  if (Object.keys(input).length > 0) await s.policyControls.updateVersion(ctx, id, input as never)
  if (status === 'published') await s.policyControls.publishVersion(ctx, id)
}

async function newControlVersion(
  s: Services,
  ctx: Ctx,
  ids: { versions: Map<string, string> },
  key: string,
  v: Obj,
  typeIds: (names: unknown) => string[],
): Promise<void> {
  const created = await s.policyControls.createVersion(ctx, {
    key,
    name: v.name as string,
    description: (v.description as string | null) ?? null,
    evidence_requirements: (v.evidence_requirements ?? []) as never,
    risk_type_ids: typeIds(v.risk_types ?? []),
  })
  ids.versions.set(`${key}+${created.version}`, created.id)
  if ((v.status ?? 'published') === 'published') await s.policyControls.publishVersion(ctx, created.id)
}
