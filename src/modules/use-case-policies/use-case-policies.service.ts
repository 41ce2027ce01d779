import { isUniqueViolation } from '../../db/create-db.js'
import type { UseCaseControlRow, UseCaseRow } from '../../db/tables.js'
import { conflict, invalid, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import {
  auditedUpdate,
  type AuditEntry,
  createdChanges,
  diff,
  findForChange,
  runMutation,
  type Tx,
} from '../../shared/mutation.js'
import { ownerNames, ownerOf, resolveOwner } from '../../shared/governed.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { utcDay } from '../../shared/today.js'
import { derive, ID, plain, stored, TIME } from '../../shared/fields.js'
import { findPackByKey, packControls } from '../policy-packs/policy-packs.service.js'
import * as repo from './use-case-policies.repo.js'
import type {
  AppliedPolicyPack,
  ApplyPolicyPack,
  ControlEvidence,
  ControlEvidenceLink,
  RequirementStatus,
  TenantControl,
  TenantControlListQuery,
  UseCaseControl,
  UseCaseControlListQuery,
  UseCaseControlUpdate,
} from './use-case-policies.schemas.js'
import type { EvidenceRequirement } from '../policy-controls/policy-controls.schemas.js'
import { findEvidence, findEvidenceMany } from '../evidence/evidence.service.js'
import { toEvidence } from '../evidence/evidence.service.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { allControls, controlEvidenceLinks } from './use-case-policies.repo.js'

type ControlBase = Omit<UseCaseControl, 'evidence_count' | 'evidence_requirements'>

export type UseCasePoliciesService = ReturnType<typeof createUseCasePoliciesService>

const controlFields = derive<UseCaseControlRow, ControlBase, object, UseCaseControlUpdate>({
  id: ID,
  use_case_id: stored(),
  // Copied from the pack's control when the pack is applied.
  control_key: stored(),
  control_version: stored(),
  control_version_id: stored(),
  name: stored(),
  // The pack a control is credited to moves to a remaining pack when its own is removed.
  policy_pack_key: stored({ audited: true }),
  policy_pack_version: stored({ audited: true }),
  status: plain(),
  due_date: plain(),
  notes: plain(),
  // Resolved against users and teams by the update below, which may refuse it.
  assignee: () => ({
    read: (row) => ownerOf(row.assignee_id as string | null, row.assignee_type as string | null),
    audited: true,
    listed: true,
  }),
  created_at: TIME,
  updated_at: TIME,
})

const appliedFields = derive<repo.AppliedPackRow, AppliedPolicyPack, object, object>({
  id: ID,
  key: stored(),
  version: stored(),
  name: stored(),
  description: stored(),
  due_date: stored(),
  applied_at: stored(),
})

export function createUseCasePoliciesService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  /** The use case, locked for the change: every mutation here names it among its locks. */
  async function useCase(tx: Tx, ctx: Ctx, id: string): Promise<UseCaseRow> {
    const row = await findForChange(tx, 'use_cases', ctx.tenantId, id)
    if (!row) throw notFound('use case', id)
    return row
  }

  async function getControl(ctx: Ctx, useCaseId: string, id: string): Promise<UseCaseControl> {
    await useCase(db, ctx, useCaseId)
    const row = await repo.findControl(db, ctx.tenantId, useCaseId, id)
    if (!row) throw notFound('use case control', id)
    return (await controlsWithEvidence(db, ctx.tenantId, [row]))[0]
  }

  return {
    async listPacks(
      ctx: Ctx,
      useCaseId: string,
      query: { page_limit?: number; page_after?: string },
    ): Promise<Page<AppliedPolicyPack>> {
      await useCase(db, ctx, useCaseId)
      const ks = keyset(query)
      return toPage(await repo.listAppliedPacks(db, ctx.tenantId, useCaseId, ks), ks, toApplied)
    },

    async getPack(ctx: Ctx, useCaseId: string, key: string): Promise<AppliedPolicyPack> {
      await useCase(db, ctx, useCaseId)
      const row = await repo.findAppliedPack(db, ctx.tenantId, useCaseId, key)
      if (!row) throw notFound('applied policy pack', key)
      return toApplied(row)
    },

    async applyPack(ctx: Ctx, useCaseId: string, input: ApplyPolicyPack): Promise<AppliedPolicyPack> {
      try {
        return await runMutation(
          database,
          ctx,
          async (tx) => {
            const uc = await useCase(tx, ctx, useCaseId)
            const version = input.version ?? undefined
            const pack = await findPackByKey(tx, ctx.tenantId, input.key, version)
            if (!pack)
              throw version === undefined
                ? invalid('key', `no policy pack has key "${input.key}"`)
                : invalid('version', `policy pack "${input.key}" has no version ${version}`)
            if (await repo.findAppliedPack(tx, ctx.tenantId, useCaseId, pack.key)) {
              throw conflict(
                `policy pack "${pack.key}" is already applied to use case ${useCaseId}; remove it first to apply another version`,
              )
            }
            const at = now()
            const dueDate = input.due_date ?? null
            await repo.insertApplication(tx, {
              tenant_id: ctx.tenantId,
              use_case_id: useCaseId,
              policy_pack_key: pack.key,
              policy_pack_id: pack.id,
              due_date: dueDate,
              created_at: at,
            })

            const present = new Set((await repo.allControls(tx, ctx.tenantId, useCaseId)).map((c) => c.control_key))
            const controls = await packControls(tx, ctx.tenantId, [pack.id])
            const added: UseCaseControlRow[] = controls
              .filter((c) => !present.has(c.control_key))
              .map((c) => ({
                id: newId('ucc'),
                tenant_id: ctx.tenantId,
                use_case_id: useCaseId,
                control_key: c.control_key,
                control_version: c.control_version,
                control_version_id: c.control_version_id,
                name: c.name,
                policy_pack_key: pack.key,
                policy_pack_version: pack.version,
                status: 'pending',
                due_date: dueDate,
                notes: null,
                assignee_id: null,
                assignee_type: null,
                created_at: at,
                updated_at: at,
              }))
            await repo.insertControls(tx, added)

            const packLabel = `${pack.key} v${pack.version}`
            const audit: AuditEntry[] = [
              {
                action: 'policy_pack.applied',
                resourceType: 'use_case',
                resourceId: uc.id,
                resourceName: uc.name,
                useCaseId: uc.id,
                subObjectType: 'policy_pack',
                subObjectId: pack.id,
                subObjectName: packLabel,
                metadata: {
                  key: pack.key,
                  version: pack.version,
                  due_date: dueDate,
                  controls_created: added.map((c) => c.control_key),
                  controls_already_present: controls
                    .filter((c) => present.has(c.control_key))
                    .map((c) => c.control_key),
                },
              },
              ...added.map(
                (row): AuditEntry => ({
                  action: 'use_case_control.created',
                  resourceType: 'use_case_control',
                  resourceId: row.id,
                  resourceName: row.control_key,
                  useCaseId: uc.id,
                  changes: createdChanges(toControl(row), controlFields.audited),
                  metadata: { policy_pack: packLabel, control_version: row.control_version },
                }),
              ),
            ]
            return {
              result: toApplied({ ...pack, due_date: dueDate, applied_at: at }),
              audit,
            }
          },
          [useCaseId],
        )
      } catch (err) {
        throw isUniqueViolation(err)
          ? conflict(
              `policy pack "${input.key}" was applied to use case ${useCaseId} at the same time; it is applied once`,
            )
          : err
      }
    },

    /** Removes the pack and the controls no other applied pack needs; shared controls stay, credited to a remaining pack. */
    async removePack(ctx: Ctx, useCaseId: string, key: string): Promise<void> {
      await runMutation(
        database,
        ctx,
        async (tx) => {
          const uc = await useCase(tx, ctx, useCaseId)
          const applied = await repo.findAppliedPack(tx, ctx.tenantId, useCaseId, key)
          if (!applied) throw notFound('applied policy pack', key)
          await repo.deleteApplication(tx, ctx.tenantId, useCaseId, key)

          const neededBy = new Map<string, { pack_key: string; pack_version: number }>()
          for (const need of await repo.neededControls(tx, ctx.tenantId, useCaseId))
            if (!neededBy.has(need.control_key)) neededBy.set(need.control_key, need)
          const audit: AuditEntry[] = []
          const removed: UseCaseControlRow[] = []
          const at = now()
          for (const control of await repo.allControls(tx, ctx.tenantId, useCaseId)) {
            const need = neededBy.get(control.control_key)
            if (!need) {
              removed.push(control)
              audit.push({
                action: 'use_case_control.deleted',
                resourceType: 'use_case_control',
                resourceId: control.id,
                resourceName: control.control_key,
                useCaseId,
                metadata: { policy_pack: `${applied.key} v${applied.version}`, status: control.status },
              })
            } else if (control.policy_pack_key === key) {
              const changes = { policy_pack_key: need.pack_key, policy_pack_version: need.pack_version }
              await repo.updateControl(tx, ctx.tenantId, control.id, { ...changes, updated_at: at })
              audit.push({
                action: 'use_case_control.updated',
                resourceType: 'use_case_control',
                resourceId: control.id,
                resourceName: control.control_key,
                useCaseId,
                changes: diff(toControl(control), toControl({ ...control, ...changes }), controlFields.audited),
              })
            }
          }
          await repo.deleteControls(
            tx,
            ctx.tenantId,
            removed.map((c) => c.id),
          )
          audit.unshift({
            action: 'policy_pack.removed',
            resourceType: 'use_case',
            resourceId: uc.id,
            resourceName: uc.name,
            useCaseId,
            subObjectType: 'policy_pack',
            subObjectId: applied.id,
            subObjectName: `${applied.key} v${applied.version}`,
            metadata: {
              key: applied.key,
              version: applied.version,
              controls_removed: removed.map((c) => c.control_key),
            },
          })
          return { result: undefined, audit }
        },
        [useCaseId],
      )
    },

    async listControls(ctx: Ctx, useCaseId: string, query: UseCaseControlListQuery): Promise<Page<UseCaseControl>> {
      await useCase(db, ctx, useCaseId)
      const ks = keyset(query)
      const page = toPage(await repo.listControls(db, ctx.tenantId, useCaseId, query, ks), ks, (row) => row)
      return { ...page, items: await controlsWithEvidence(db, ctx.tenantId, page.items) }
    },

    /** The tenant's controls across its use cases, by assignee, status, openness or overdueness. */
    async listTenantControls(ctx: Ctx, query: TenantControlListQuery): Promise<Page<TenantControl>> {
      const ks = keyset(query)
      const page = toPage(await repo.listTenantControls(db, ctx.tenantId, query, ks, utcDay()), ks, (row) => row)
      const [controls, names] = await Promise.all([
        controlsWithEvidence(db, ctx.tenantId, page.items),
        repo.useCaseNames(
          db,
          ctx.tenantId,
          page.items.map((row) => row.use_case_id),
        ),
      ])
      return { ...page, items: controls.map((c) => ({ ...c, use_case_name: names.get(c.use_case_id) ?? '' })) }
    },

    getControl,

    async listControlEvidence(ctx: Ctx, useCaseId: string, controlId: string): Promise<Page<ControlEvidence>> {
      const control = await getControl(ctx, useCaseId, controlId)
      const links = await repo.controlEvidenceLinks(db, ctx.tenantId, [control.id])
      const evidence = new Map(
        (
          await findEvidenceMany(
            db,
            ctx.tenantId,
            links.map((l) => l.evidence_id),
          )
        ).map((e) => [e.id, toEvidence(e)]),
      )
      return {
        items: links.map((l) => ({
          use_case_control_id: control.id,
          evidence_id: l.evidence_id,
          requirement: l.requirement,
          linked_at: l.created_at,
          evidence: evidence.get(l.evidence_id)!,
        })),
        pagination: { has_more: false, next_cursor: null },
      }
    },

    /** Links evidence to a control (for one of its requirements); linking again changes nothing, or only the requirement. */
    async linkEvidence(
      ctx: Ctx,
      useCaseId: string,
      controlId: string,
      input: ControlEvidenceLink,
    ): Promise<{ link: ControlEvidence; created: boolean }> {
      try {
        return await runMutation(
          database,
          ctx,
          async (tx) => {
            const uc = await useCase(tx, ctx, useCaseId)
            const control = await repo.findControl(tx, ctx.tenantId, useCaseId, controlId)
            if (!control) throw notFound('use case control', controlId)
            const evidence = await findEvidence(tx, ctx.tenantId, input.evidence_id)
            if (!evidence) throw invalid('evidence_id', `evidence ${input.evidence_id} was not found`)
            const requirements = await requirementsOf(tx, ctx.tenantId, control)
            const requirement = input.requirement ?? (requirements.length === 1 ? 0 : null)
            if (requirement !== null && requirement >= requirements.length) {
              throw invalid(
                'requirement',
                requirements.length === 0
                  ? `control ${control.control_key} v${control.control_version} has no evidence requirements`
                  : `control ${control.control_key} v${control.control_version} has requirements 0-${requirements.length - 1}`,
              )
            }
            const existing = await repo.findControlEvidence(tx, ctx.tenantId, controlId, evidence.id)
            const at = existing?.created_at ?? now()
            const link = {
              use_case_control_id: controlId,
              evidence_id: evidence.id,
              requirement,
              linked_at: at,
              evidence: toEvidence(evidence),
            }
            if (existing && existing.requirement === requirement) return { result: { link, created: false }, audit: [] }
            if (existing) await repo.updateControlEvidence(tx, ctx.tenantId, controlId, evidence.id, requirement)
            else
              await repo.insertControlEvidence(tx, {
                tenant_id: ctx.tenantId,
                use_case_id: uc.id,
                use_case_control_id: controlId,
                evidence_id: evidence.id,
                requirement,
                created_at: at,
              })
            return {
              result: { link, created: !existing },
              audit: {
                action: 'use_case_control.evidence_linked',
                resourceType: 'use_case_control',
                resourceId: controlId,
                resourceName: control.control_key,
                useCaseId,
                subObjectType: 'evidence',
                subObjectId: evidence.id,
                subObjectName: evidence.title,
                changes: { requirement: [existing?.requirement ?? null, requirement] },
              },
            }
          },
          [useCaseId],
        )
      } catch (err) {
        throw isUniqueViolation(err)
          ? conflict(
              `evidence ${input.evidence_id} was linked to control ${controlId} at the same time; it is linked once`,
            )
          : err
      }
    },

    async unlinkEvidence(ctx: Ctx, useCaseId: string, controlId: string, evidenceId: string): Promise<void> {
      await runMutation(
        database,
        ctx,
        async (tx) => {
          await useCase(tx, ctx, useCaseId)
          const control = await repo.findControl(tx, ctx.tenantId, useCaseId, controlId)
          if (!control) throw notFound('use case control', controlId)
          const existing = await repo.findControlEvidence(tx, ctx.tenantId, controlId, evidenceId)
          if (!existing) throw notFound('evidence link', `${evidenceId} on control ${controlId}`)
          await repo.deleteControlEvidence(tx, ctx.tenantId, controlId, evidenceId)
          return {
            result: undefined,
            audit: {
              action: 'use_case_control.evidence_unlinked',
              resourceType: 'use_case_control',
              resourceId: controlId,
              resourceName: control.control_key,
              useCaseId,
              subObjectType: 'evidence',
              subObjectId: evidenceId,
              changes: { requirement: [existing.requirement, null] },
            },
          }
        },
        [useCaseId],
      )
    },

    async updateControl(ctx: Ctx, useCaseId: string, id: string, input: UseCaseControlUpdate): Promise<UseCaseControl> {
      return runMutation(
        database,
        ctx,
        async (tx) => {
          await useCase(tx, ctx, useCaseId)
          const current = await repo.findControl(tx, ctx.tenantId, useCaseId, id)
          if (!current) throw notFound('use case control', id)
          const changes: Partial<UseCaseControlRow> = {
            ...controlFields.updateColumns(input, ctx),
            ...(await resolveOwner(tx, ctx.tenantId, input.assignee, 'assignee', 'assignee')),
          }
          const [before, after] = await withAssigneeNames(tx, ctx.tenantId, [
            toControl(current),
            toControl({ ...current, ...changes }),
          ])
          const outcome = await auditedUpdate(
            {
              before,
              after,
              fields: controlFields.audited,
              audit: {
                action: 'use_case_control.updated',
                resourceType: 'use_case_control',
                resourceId: id,
                resourceName: current.control_key,
                useCaseId,
              },
            },
            async (updatedAt) => {
              await repo.updateControl(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
            },
          )
          // Read back in the same transaction: inside an enclosing mutation (a configuration apply) nothing is committed yet.
          const row = await repo.findControl(tx, ctx.tenantId, useCaseId, id)
          return { result: (await controlsWithEvidence(tx, ctx.tenantId, [row!]))[0], audit: outcome.audit }
        },
        [useCaseId],
      )
    },
  }
}

const toApplied = appliedFields.toItem

async function requirementsOf(db: Tx, tenantId: string, control: UseCaseControlRow): Promise<EvidenceRequirement[]> {
  const json = (await repo.evidenceRequirements(db, tenantId, [control.control_version_id])).get(
    control.control_version_id,
  )
  return json ? (JSON.parse(json) as EvidenceRequirement[]) : []
}

/** Controls as the API shows them: with their assignee by name, their evidence count and, per evidence requirement, whether it is met. */
export async function controlsWithEvidence(
  db: Tx,
  tenantId: string,
  rows: UseCaseControlRow[],
): Promise<UseCaseControl[]> {
  const [links, requirements] = await Promise.all([
    repo.controlEvidenceLinks(
      db,
      tenantId,
      rows.map((r) => r.id),
    ),
    repo.evidenceRequirements(
      db,
      tenantId,
      rows.map((r) => r.control_version_id),
    ),
  ])
  const controls = rows.map((row) => {
    const mine = links.filter((l) => l.use_case_control_id === row.id)
    const reqs = JSON.parse(requirements.get(row.control_version_id) ?? '[]') as EvidenceRequirement[]
    const statuses: RequirementStatus[] = reqs.map((r, i) => {
      const ids = mine.filter((l) => l.requirement === i).map((l) => l.evidence_id)
      return {
        requirement: i,
        type: r.type,
        description: r.description,
        required: r.required,
        met: ids.length > 0,
        evidence_ids: ids,
      }
    })
    return { ...toControl(row), evidence_count: mine.length, evidence_requirements: statuses }
  })
  return withAssigneeNames(db, tenantId, controls)
}

const toControl = controlFields.toItem

async function withAssigneeNames<T extends ControlBase>(db: Tx, tenantId: string, items: T[]): Promise<T[]> {
  const names = await ownerNames(
    db,
    tenantId,
    items.flatMap((item) => (item.assignee ? [item.assignee] : [])),
  )
  return items.map((item) =>
    item.assignee ? { ...item, assignee: { ...item.assignee, name: names.get(item.assignee.owner_id) ?? '' } } : item,
  )
}
