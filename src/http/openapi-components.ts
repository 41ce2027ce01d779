import * as apiKeys from '../modules/api-keys/api-keys.schemas.js'
import * as auditLogs from '../modules/audit-logs/audit-logs.schemas.js'
import * as auth from '../modules/auth/auth.schemas.js'
import * as customFields from '../modules/custom-fields/custom-fields.schemas.js'
import * as dossier from '../modules/dossier/dossier.schemas.js'
import * as evidence from '../modules/evidence/evidence.schemas.js'
import * as governanceSummary from '../modules/governance-summary/governance-summary.schemas.js'
import * as health from '../modules/health/health.schemas.js'
import * as models from '../modules/models/models.schemas.js'
import * as policyControls from '../modules/policy-controls/policy-controls.schemas.js'
import * as policyPacks from '../modules/policy-packs/policy-packs.schemas.js'
import * as questionnaires from '../modules/questionnaires/questionnaires.schemas.js'
import * as relationships from '../modules/relationships/relationships.schemas.js'
import * as riskScenarios from '../modules/risk-scenarios/risk-scenarios.schemas.js'
import * as riskTypes from '../modules/risk-types/risk-types.schemas.js'
import * as sessions from '../modules/sessions/sessions.schemas.js'
import * as sso from '../modules/sso/sso.schemas.js'
import * as system from '../modules/system/system.schemas.js'
import * as teams from '../modules/teams/teams.schemas.js'
import * as useCasePolicies from '../modules/use-case-policies/use-case-policies.schemas.js'
import * as useCases from '../modules/use-cases/use-cases.schemas.js'
import * as users from '../modules/users/users.schemas.js'
import * as vendors from '../modules/vendors/vendors.schemas.js'
import * as useCaseWorkflow from '../modules/workflow-stages/use-case-workflow.schemas.js'
import * as workflowStages from '../modules/workflow-stages/workflow-stages.schemas.js'
import * as governed from '../shared/governed.schemas.js'
import * as events from '../modules/events/events.schemas.js'
import * as webhooks from '../modules/webhooks/webhooks.schemas.js'
import * as configuration from '../modules/configuration/configuration.schemas.js'
import * as pagination from '../shared/pagination.js'

/**
 * The modules whose exported schemas are published once, under their export names, in the OpenAPI document's
 * `components.schemas` (`UseCase`, `UseCaseCreate`, `UseCasePage`, `UseCaseListQuery`, …), and `$ref`ed wherever
 * a route uses them. A new family adds its schemas module here; nothing else changes.
 */
export const SCHEMA_MODULES: readonly Record<string, unknown>[] = [
  apiKeys,
  auditLogs,
  auth,
  dossier,
  evidence,
  governanceSummary,
  health,
  models,
  policyControls,
  policyPacks,
  questionnaires,
  relationships,
  riskScenarios,
  riskTypes,
  sessions,
  sso,
  system,
  useCasePolicies,
  useCases,
  vendors,
  useCaseWorkflow,
  workflowStages,
  pagination,
  users,
  teams,
  customFields,
  governed,
  webhooks,
  configuration,
  events,
]

type Json = Record<string, unknown>

export interface Components {
  /** Each named schema, with the components used inside it as `$ref`s. */
  schemas: Record<string, Json>
  /** The name a schema is published under, if it is one of them (the same object, or an equal copy). */
  nameOf(schema: unknown): string | undefined
  /** A copy of `schema` with every component inside it as a `$ref`; `schema` itself too unless `keepTop`. */
  refify(schema: unknown, keepTop?: boolean): unknown
}

export const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Records and enums are named; plain strings and numbers stay inline (naming `{type: "string"}` would match everywhere). */
const isNameable = (value: unknown): value is Json =>
  isObject(value) && (value.type === 'object' || Array.isArray(value.enum))

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'examples', 'example', 'default'])

/** JSON with sorted keys: equal schemas built separately (TypeBox copies a schema it marks optional) compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (!isObject(value)) return JSON.stringify(value) ?? 'null'
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
    .join(',')}}`
}

/** Names the exported schemas of `modules` (plus `extra`); two different schemas under one name are a startup error. */
export function buildComponents(
  extra: Record<string, unknown> = {},
  modules: readonly Record<string, unknown>[] = SCHEMA_MODULES,
): Components {
  const byObject = new Map<object, string>()
  const byCanonical = new Map<string, string>()
  const originals = new Map<string, Json>()
  for (const exports of [extra, ...modules]) {
    for (const [name, value] of Object.entries(exports)) {
      // Path parameter shapes become the operation's parameters; they are not published as components.
      if (!/^[A-Z]/.test(name) || name.endsWith('Params') || !isNameable(value) || byObject.has(value)) continue
      const key = canonical(value)
      const known = originals.get(name)
      if (known && canonical(known) !== key)
        throw new Error(`two different schemas are exported as ${name}; OpenAPI component names must be unique`)
      byObject.set(value, byCanonical.get(key) ?? name)
      if (!byCanonical.has(key)) {
        byCanonical.set(key, name)
        originals.set(name, value)
      }
    }
  }
  const canonicalCache = new WeakMap<object, string>()
  const nameOf = (schema: unknown): string | undefined => {
    if (!isNameable(schema)) return undefined
    const direct = byObject.get(schema)
    if (direct) return direct
    let key = canonicalCache.get(schema)
    if (key === undefined) canonicalCache.set(schema, (key = canonical(schema)))
    return byCanonical.get(key)
  }
  const refify = (schema: unknown, keepTop = false): unknown => {
    if (Array.isArray(schema)) return schema.map((item) => refify(item))
    if (!isObject(schema)) return schema
    const name = keepTop ? undefined : nameOf(schema)
    if (name) return componentRef(name)
    const out: Json = {}
    for (const [key, value] of Object.entries(schema)) out[key] = DATA_KEYWORDS.has(key) ? value : refify(value)
    return out
  }
  const schemas: Record<string, Json> = {}
  for (const [name, schema] of [...originals].sort(([a], [b]) => a.localeCompare(b)))
    schemas[name] = refify(schema, true) as Json
  return { schemas, nameOf, refify }
}
