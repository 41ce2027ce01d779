import { createHash } from 'node:crypto'
import { emailKey } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import { customFieldCatalog } from '../custom-fields/custom-fields.service.js'
import { toVersion } from '../policy-controls/policy-controls.service.js'
import { riskTypeCatalog } from '../risk-types/risk-types.service.js'
import { teamCatalog } from '../teams/teams.service.js'
import { userCatalog } from '../users/users.service.js'
import { toWorkflowStage } from '../workflow-stages/workflow-stages.service.js'
import { toEndpoint } from '../webhooks/webhooks.service.js'
import type { ConfigurationRows } from './configuration.repo.js'
import { API_VERSION, type ConfigurationDocument, type PlanChange, type SectionName } from './configuration.schemas.js'
import { canonicalJson, type DocumentError, pointerOf } from './configuration.document.js'

/**
 * The document model: a tenant's rows and a document's objects both become the same canonical objects (every
 * field present, defaults filled in by the families' own declarations, references by natural key, lists in one
 * order), so that export is canonical and a plan is a plain comparison of the two.
 */

type Obj = Record<string, unknown>
export type Canonical = Required<Omit<ConfigurationDocument, 'apiVersion'>> & { apiVersion: string }

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const sortBy = <T>(items: T[], key: (item: T) => string) => [...items].sort((a, b) => byText(key(a), key(b)))
const blankRow = { id: '', tenant_id: '', created_at: '', updated_at: '' }

/** The natural key of an object of a section, as compared (names by nameKey, emails lower-cased). */
export const NATURAL_KEYS: Record<SectionName, (o: Obj) => string> = {
  workflow_stages: (o) => nameKey(String(o.name)),
  risk_types: (o) => nameKey(String(o.name)),
  risk_scenarios: (o) => nameKey(String(o.name)),
  custom_fields: (o) => nameKey(String(o.name)),
  policy_controls: (o) => String(o.key),
  policy_packs: (o) => String(o.key),
  questionnaires: (o) => String(o.key),
  users: (o) => emailKey(String(o.email)),
  teams: (o) => nameKey(String(o.name)),
  webhook_endpoints: (o) => String(o.url),
}
/** The key a plan shows: as written. */
const shownKey: Record<SectionName, string> = {
  workflow_stages: 'name',
  risk_types: 'name',
  risk_scenarios: 'name',
  custom_fields: 'name',
  policy_controls: 'key',
  policy_packs: 'key',
  questionnaires: 'key',
  users: 'email',
  teams: 'name',
  webhook_endpoints: 'url',
}
export const SECTIONS = Object.keys(NATURAL_KEYS) as SectionName[]

const riskType = (item: Obj) => ({
  name: item.name,
  description: item.description,
  custom: item.custom,
  hidden: item.hidden,
})
const customField = (item: Obj) => ({
  name: item.name,
  description: item.description,
  type: item.type,
  element_type: item.element_type,
  options: item.options,
  multiple: item.multiple,
  required: item.required,
  entity_types: item.entity_types,
  archived: item.archived,
  metadata: item.metadata,
})
const user = (item: Obj, role?: unknown) => ({
  email: item.email,
  name: item.name,
  title: item.title,
  active: item.active,
  ...(role !== undefined && { role }),
})
const requirement = (r: Obj) => ({ type: r.type, description: r.description, required: r.required ?? true })
const question = (q: Obj) => ({
  id: q.id,
  question: q.question,
  evidence_type: q.evidence_type,
  multiple: q.multiple ?? false,
  select_options: q.select_options ?? [],
  required: q.required ?? false,
})
const section = (s: Obj) => ({
  id: s.id,
  title: s.title,
  description: s.description ?? null,
  questions: (s.questions as Obj[]).map(question),
})

/** The tenant's configuration as its canonical document. */
export function exportDocument(rows: ConfigurationRows): Canonical {
  const riskTypeNames = new Map(rows.riskTypes.map((r) => [r.id, r.name]))
  const typeNames = (ids: string[]) =>
    sortBy(
      ids.map((id) => riskTypeNames.get(id)).filter((n): n is string => n !== undefined),
      nameKey,
    )
  const scenarioTypes = new Map<string, string[]>()
  for (const link of rows.scenarioTypes) {
    const list = scenarioTypes.get(link.risk_scenario_id) ?? []
    list.push(link.risk_type_id)
    scenarioTypes.set(link.risk_scenario_id, list)
  }
  const versionsOf = new Map<string, Obj[]>()
  for (const row of rows.versions) {
    const v = toVersion(row)
    const list = versionsOf.get(row.base_id) ?? []
    list.push({
      version: v.version,
      status: v.status,
      name: v.name,
      description: v.description,
      evidence_requirements: v.evidence_requirements.map((r) => requirement(r as Obj)),
      risk_types: typeNames(v.risk_type_ids),
    })
    versionsOf.set(row.base_id, list)
  }
  const packControls = new Map<string, Obj[]>()
  for (const c of rows.packControls) {
    const list = packControls.get(c.policy_pack_id) ?? []
    list.push({ key: c.control_key, version: c.control_version })
    packControls.set(c.policy_pack_id, list)
  }
  const versioned = <R extends { key: string }>(list: R[], version: (row: R) => Obj) => {
    const byKey = new Map<string, Obj[]>()
    for (const row of list) {
      const versions = byKey.get(row.key) ?? []
      versions.push(version(row))
      byKey.set(row.key, versions)
    }
    return sortBy([...byKey], ([key]) => key).map(([key, versions]) => ({ key, versions }))
  }
  const membersOf = new Map<string, string[]>()
  for (const m of rows.members) {
    const list = membersOf.get(m.team_id) ?? []
    list.push(m.email_key)
    membersOf.set(m.team_id, list)
  }
  return {
    apiVersion: API_VERSION,
    workflow_stages: rows.stages.map((row) => {
      const s = toWorkflowStage(row)
      return {
        name: s.name,
        description: s.description,
        assessment_required: s.assessment_required,
        evidence_collection_required: s.evidence_collection_required,
      }
    }),
    risk_types: sortBy(rows.riskTypes, (r) => r.name_key).map((row) => riskType(riskTypeCatalog.toItem(row))),
    risk_scenarios: sortBy(rows.scenarios, (r) => r.name_key).map((row) => ({
      name: row.name,
      description: row.description,
      risk_types: typeNames(scenarioTypes.get(row.id) ?? []),
      domains: JSON.parse(row.domains),
      industries: JSON.parse(row.industries),
      regions: JSON.parse(row.regions),
      archived: row.archived === 1,
    })),
    custom_fields: sortBy(rows.customFields, (r) => r.name_key).map((row) =>
      customField(customFieldCatalog.toItem(row)),
    ),
    policy_controls: sortBy(rows.bases, (r) => r.key).map((row) => ({
      key: row.key,
      name: row.name,
      archived: row.archived === 1,
      deprecated: row.deprecated === 1,
      versions: versionsOf.get(row.id) ?? [],
    })),
    policy_packs: versioned(rows.packs, (row) => ({
      version: row.version,
      name: row.name,
      description: row.description,
      controls: packControls.get(row.id) ?? [],
    })),
    questionnaires: versioned(rows.questionnaires, (row) => ({
      version: row.version,
      name: row.name,
      description: row.description,
      target: row.target,
      sections: (JSON.parse(row.sections) as Obj[]).map(section),
    })),
    users: sortBy(rows.users, (r) => r.email_key).map((row) =>
      user(userCatalog.toItem(row), (row as { role?: unknown }).role),
    ),
    teams: sortBy(rows.teams, (r) => r.name_key)
      .map((row) => ({
        ...teamCatalog.toItem(row),
        id: undefined,
        created_at: undefined,
        updated_at: undefined,
        members: membersOf.get(row.id) ?? [],
      }))
      .map(({ name, description, members }) => ({ name, description, members })),
    webhook_endpoints: rows.webhooks.map((row) => {
      const e = toEndpoint(row as never)
      return { url: e.url, description: e.description, events: e.events, enabled: e.enabled }
    }),
  } as Canonical
}

/**
 * A document's objects in canonical form, defaults filled in as the families fill them, references checked:
 * duplicates of a natural key and references that name nothing (in the document or the tenant) are 422 errors.
 */
export function canonicalDocument(
  doc: ConfigurationDocument,
  tenant: Canonical,
): { desired: Partial<Canonical>; errors: DocumentError[] } {
  const errors: DocumentError[] = []
  const fail = (pointer: string, message: string) => errors.push({ field: pointer, pointer, message })
  for (const name of SECTIONS) {
    const seen = new Map<string, number>()
    ;((doc[name] ?? []) as Obj[]).forEach((o, i) => {
      const key = NATURAL_KEYS[name](o)
      const first = seen.get(key)
      if (first !== undefined) {
        fail(
          pointerOf(name, i, shownKey[name]),
          `duplicates ${name}[${first}] (${shownKey[name]} ${JSON.stringify(o[shownKey[name]])})`,
        )
      } else seen.set(key, i)
    })
  }
  for (const name of ['policy_controls', 'policy_packs', 'questionnaires'] as const) {
    ;(doc[name] ?? []).forEach((o, i) => {
      const seen = new Set<number>()
      o.versions.forEach((v, j) => {
        if (seen.has(v.version))
          fail(pointerOf(name, i, 'versions', j, 'version'), `duplicates version ${v.version} of ${o.key}`)
        seen.add(v.version)
      })
    })
  }
  // Reference targets: the document's own, else the tenant's, by natural key, with the spelling they will have.
  const spelled = (section: 'risk_types' | 'users', field: 'name' | 'email') => {
    const map = new Map<string, string>()
    for (const o of tenant[section] as Obj[]) map.set(NATURAL_KEYS[section](o), String(o[field]))
    for (const o of (doc[section] ?? []) as Obj[]) map.set(NATURAL_KEYS[section](o), String(o[field]))
    return map
  }
  const riskTypes = spelled('risk_types', 'name')
  const users = spelled('users', 'email')
  const typeRefs = (names: string[] | undefined, at: string) =>
    sortBy(
      (names ?? []).flatMap((n, i) => {
        const found = riskTypes.get(nameKey(n))
        if (found === undefined)
          fail(`${at}/${i}`, `risk type ${JSON.stringify(n)} is neither in the document nor in the tenant`)
        return found === undefined ? [] : [found]
      }),
      nameKey,
    )
  const controlVersions = new Set<string>()
  for (const c of tenant.policy_controls as Obj[])
    for (const v of c.versions as Obj[]) if (v.status === 'published') controlVersions.add(`${c.key}+${v.version}`)
  for (const c of doc.policy_controls ?? [])
    for (const v of c.versions)
      if ((v.status ?? 'published') === 'published') controlVersions.add(`${c.key}+${v.version}`)

  const desired: Partial<Canonical> = { apiVersion: API_VERSION }
  if (doc.workflow_stages) {
    desired.workflow_stages = doc.workflow_stages.map((s) => ({
      name: s.name.trim(),
      description: s.description ?? null,
      assessment_required: s.assessment_required ?? true,
      evidence_collection_required: s.evidence_collection_required ?? true,
    }))
  }
  if (doc.risk_types) {
    desired.risk_types = sortBy(
      doc.risk_types.map((r) =>
        riskType(
          riskTypeCatalog.toItem({
            ...blankRow,
            ...(riskTypeCatalog.create(r as never, undefined as never, undefined as never) as object),
          } as never) as Obj,
        ),
      ),
      (o) => nameKey(String(o.name)),
    ) as never
  }
  if (doc.risk_scenarios) {
    desired.risk_scenarios = sortBy(
      doc.risk_scenarios.map((s, i) => ({
        name: s.name.trim(),
        description: s.description ?? null,
        risk_types: typeRefs(s.risk_types, pointerOf('risk_scenarios', i, 'risk_types')),
        domains: s.domains ?? [],
        industries: s.industries ?? [],
        regions: s.regions ?? [],
        archived: s.archived ?? false,
      })),
      (o) => nameKey(o.name),
    ) as never
  }
  if (doc.custom_fields) {
    desired.custom_fields = sortBy(
      doc.custom_fields.map((f, i) => {
        try {
          const columns = customFieldCatalog.create(f as never, undefined as never, undefined as never) as object
          return customField(customFieldCatalog.toItem({ ...blankRow, ...columns } as never) as Obj)
        } catch (err) {
          fail(pointerOf('custom_fields', i), (err as Error & { detail?: string }).detail ?? (err as Error).message)
          return customField(f as Obj)
        }
      }),
      (o) => nameKey(String(o.name)),
    ) as never
  }
  if (doc.policy_controls) {
    desired.policy_controls = sortBy(
      doc.policy_controls.map((c, i) => ({
        key: c.key,
        name: c.name.trim(),
        archived: c.archived ?? false,
        deprecated: c.deprecated ?? false,
        versions: sortBy(
          c.versions.map((v, j) => ({
            version: v.version,
            status: v.status ?? 'published',
            name: v.name.trim(),
            description: v.description ?? null,
            evidence_requirements: (v.evidence_requirements ?? []).map((r) => requirement(r as Obj)),
            risk_types: typeRefs(v.risk_types, pointerOf('policy_controls', i, 'versions', j, 'risk_types')),
          })),
          (v) => String(v.version).padStart(10, '0'),
        ),
      })),
      (o) => o.key,
    ) as never
  }
  if (doc.policy_packs) {
    desired.policy_packs = sortBy(
      doc.policy_packs.map((p, i) => ({
        key: p.key,
        versions: sortBy(
          p.versions.map((v, j) => ({
            version: v.version,
            name: v.name.trim(),
            description: v.description ?? null,
            controls: v.controls.map((c, k) => {
              if (!controlVersions.has(`${c.key}+${c.version}`)) {
                fail(
                  pointerOf('policy_packs', i, 'versions', j, 'controls', k),
                  `control ${c.key}+${c.version} is not a published version in the document or the tenant`,
                )
              }
              return { key: c.key, version: c.version }
            }),
          })),
          (v) => String(v.version).padStart(10, '0'),
        ),
      })),
      (o) => o.key,
    ) as never
  }
  if (doc.questionnaires) {
    desired.questionnaires = sortBy(
      doc.questionnaires.map((q) => ({
        key: q.key,
        versions: sortBy(
          q.versions.map((v) => ({
            version: v.version,
            name: v.name.trim(),
            description: v.description ?? null,
            target: v.target,
            sections: v.sections.map((s) => section(s as Obj)),
          })),
          (v) => String(v.version).padStart(10, '0'),
        ),
      })),
      (o) => o.key,
    ) as never
  }
  if (doc.users) {
    desired.users = sortBy(
      doc.users.map((u) => ({
        email: u.email.trim(),
        name: u.name?.trim() ?? null,
        title: u.title ?? null,
        active: u.active ?? true,
        ...(u.role !== undefined && { role: u.role }),
      })),
      (o) => emailKey(o.email),
    ) as never
  }
  if (doc.teams) {
    desired.teams = sortBy(
      doc.teams.map((t, i) => ({
        name: t.name.trim(),
        description: t.description ?? null,
        members: [
          ...new Set(
            (t.members ?? []).flatMap((m, j) => {
              if (!users.has(emailKey(m))) {
                fail(
                  pointerOf('teams', i, 'members', j),
                  `user ${JSON.stringify(m)} is neither in the document nor in the tenant`,
                )
                return []
              }
              return [emailKey(m)]
            }),
          ),
        ].sort(byText),
      })),
      (o) => nameKey(o.name),
    ) as never
  }
  if (doc.webhook_endpoints) {
    desired.webhook_endpoints = sortBy(
      doc.webhook_endpoints.map((e) => ({
        url: e.url,
        description: e.description ?? null,
        events: e.events,
        enabled: e.enabled ?? true,
      })),
      (o) => o.url,
    ) as never
  }
  return { desired, errors }
}

/** Field by field before/after for the fields that differ; null when none does. */
function fieldChanges(
  before: Obj,
  after: Obj,
  skip: string[] = [],
): Record<string, { before: unknown; after: unknown }> | null {
  const out: Record<string, { before: unknown; after: unknown }> = {}
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (skip.includes(field)) continue
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field]))
      out[field] = { before: before[field], after: after[field] }
  }
  return Object.keys(out).length > 0 ? out : null
}

/** What applying `desired` to the tenant would do, object by object, in the order apply does it. */
export function planChanges(current: Canonical, desired: Partial<Canonical>, prune: boolean): PlanChange[] {
  const changes: PlanChange[] = []
  for (const name of SECTIONS) {
    const wanted = desired[name] as Obj[] | undefined
    if (!wanted) continue
    const key = NATURAL_KEYS[name]
    const existing = new Map((current[name] as Obj[]).map((o) => [key(o), o]))
    const versionedSection = name === 'policy_controls' || name === 'policy_packs' || name === 'questionnaires'
    wanted.forEach((o, position) => {
      const shown = String(o[shownKey[name]])
      const before = existing.get(key(o))
      if (!before && versionedSection) {
        if (name === 'policy_controls') {
          changes.push({
            section: name,
            key: shown,
            action: 'create',
            changes: fieldChanges({}, o, ['versions']) ?? {},
          })
        }
        // Its base fields are the create's own: only the versions are new beside it.
        changes.push(...versionChanges(name, shown, { ...o, versions: [] }, o))
        return
      }
      if (!before) {
        changes.push({ section: name, key: shown, action: 'create', changes: fieldChanges({}, o) ?? {} })
        return
      }
      existing.delete(key(o))
      if (versionedSection) {
        changes.push(...versionChanges(name, shown, before, o))
        return
      }
      // A user's role left out of the document is left alone (never a demotion to the create's default).
      let diff = fieldChanges(before, o, name === 'users' && o.role === undefined ? ['role'] : [])
      if (name === 'workflow_stages') {
        // Stages keep their order: a stage's place among the intermediate ones, from 1.
        const was = (current.workflow_stages as Obj[]).findIndex((s) => key(s) === key(o))
        if (was !== position) diff = { ...diff, position: { before: was + 1, after: position + 1 } }
      }
      changes.push(
        diff
          ? { section: name, key: shown, action: 'update', changes: diff }
          : { section: name, key: shown, action: 'unchanged' },
      )
    })
    if (prune && !versionedSection) {
      for (const o of existing.values())
        changes.push({ section: name, key: String(o[shownKey[name]]), action: 'delete' })
    }
  }
  return changes
}

/** A versioned object: its base fields may change, a published version never does (a changed one is a new version). */
function versionChanges(name: SectionName, key: string, before: Obj, after: Obj): PlanChange[] {
  const out: PlanChange[] = []
  const baseDiff = fieldChanges(before, after, ['versions'])
  if (baseDiff) out.push({ section: name, key, action: 'update', changes: baseDiff })
  const had = new Map((before.versions as Obj[]).map((v) => [v.version as number, v]))
  let next = Math.max(0, ...had.keys())
  for (const v of after.versions as Obj[]) {
    const was = had.get(v.version as number)
    const shown = `${key}+${v.version}`
    if (!was) {
      next++
      out.push({
        section: name,
        key: `${key}+${next}`,
        action: 'create',
        document_version: v.version as number,
        changes: fieldChanges({}, { ...v, version: next }) ?? {},
        ...(next !== v.version && { note: `version ${v.version} of the document becomes version ${next}` }),
      })
      continue
    }
    const diff = fieldChanges(was, v)
    if (!diff) {
      out.push({ section: name, key: shown, action: 'unchanged' })
    } else if (was.status === 'draft' && !diff.status) {
      out.push({ section: name, key: shown, action: 'update', changes: diff })
    } else if (was.status === 'draft') {
      out.push({ section: name, key: shown, action: 'update', changes: diff, note: 'the draft is published' })
    } else if ((before.versions as Obj[]).some((t) => !fieldChanges(t, v, ['version']))) {
      const same = (before.versions as Obj[]).find((t) => !fieldChanges(t, v, ['version']))!
      out.push({ section: name, key: shown, action: 'unchanged', note: `the change is ${key}+${same.version} already` })
    } else {
      next++
      out.push({
        section: name,
        key: `${key}+${next}`,
        action: 'create',
        document_version: v.version as number,
        changes: diff,
        note: `published ${shown} is never edited: the change is a new version`,
      })
    }
  }
  return out
}

/** Pins the tenant's configuration, the document and the prune flag: apply refuses (409) if any differs. */
export function planId(current: Canonical, desired: Partial<Canonical>, prune: boolean): string {
  return `plan_${createHash('sha256')
    .update(canonicalJson(current))
    .update('\0')
    .update(canonicalJson(desired))
    .update(prune ? '\0prune' : '\0')
    .digest('base64url')
    .slice(0, 43)}`
}

export function summarize(changes: PlanChange[]) {
  const summary = { create: 0, update: 0, unchanged: 0, delete: 0 }
  for (const c of changes) summary[c.action]++
  return summary
}
