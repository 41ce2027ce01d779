import { createClient, type Result } from '@aigov/client'
import { AppError } from '../http/errors.js'
import { SOURCE_HEADER } from '../http/plugins/auth.js'
import { parsedJson } from '../modules/configuration/configuration.document.js'
import type { ConfigurationPlan } from '../modules/configuration/configuration.schemas.js'
import { createServices } from '../services.js'
import { systemCtx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'

type Applied = ConfigurationPlan & { applied: number }
type Document = Record<string, unknown>

/** One end of a copy: a tenant of the database the CLI opens, or of a running service over HTTP. */
export interface ConfigurationSide {
  /** How messages name this end: `tenant acme`, or `tenant acme at https://…`. */
  label: string
  /** The tenant's configuration document (its JSON form). */
  export(): Promise<Document>
  plan(document: Document, prune: boolean): Promise<ConfigurationPlan>
  apply(document: Document, prune: boolean, planId: string): Promise<Applied>
}

/** Said when the target changed between the plan shown and the apply (409): nothing was applied. */
export class StalePlanError extends Error {}

const staleMessage = (label: string) =>
  `${label} changed since the plan shown was made; nothing was applied. Run the copy again to see a new plan.`

export function localSide(deps: Deps, tenant: string): ConfigurationSide {
  const label = `tenant ${tenant}`
  const ctx = systemCtx(tenant, 'cli')
  const configuration = createServices(deps).configuration
  return {
    label,
    export: async () => JSON.parse(await configuration.export(ctx, 'json')),
    plan: (document, prune) => configuration.plan(ctx, parsedJson(document), prune),
    apply: async (document, prune, planId) => {
      try {
        return await configuration.apply(ctx, parsedJson(document), { prune, planId })
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') throw new StalePlanError(staleMessage(label))
        throw err
      }
    },
  }
}

/**
 * A tenant of a running service, reached through the TypeScript client with an API key of that tenant (admin for
 * a target): its token exchange, retries and timeouts; documents keep the wire's keys.
 */
export function remoteSide(baseUrl: string, tenant: string, apiKey: string): ConfigurationSide {
  const label = `tenant ${tenant} at ${baseUrl}`
  const client = createClient({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey,
    tenant,
    // Whole configurations: a large tenant's plan takes longer than a record's call.
    timeoutMs: 120_000,
    headers: { [SOURCE_HEADER]: 'cli' },
  })
  const data = async <T>(doing: string, call: Promise<Result<unknown>>): Promise<T> => {
    const result = await call
    if (!result.error) return result.data as T
    const { error } = result
    if (doing === 'the apply' && error.kind === 'conflict') throw new StalePlanError(staleMessage(label))
    const answered = error.status ? `answered ${error.status}` : 'failed'
    throw new Error(`${label}: ${doing} ${answered}: ${error.message}`)
  }
  return {
    label,
    export: () => data('the export', client.configuration.export()),
    plan: (document, prune) => data('the plan', client.configuration.plan(document as never, { prune })),
    apply: (document, prune, planId) =>
      data('the apply', client.configuration.apply(document as never, { prune, planId })),
  }
}

/**
 * Copies the source's configuration onto the target: plans it, shows the plan, asks (`confirm`), applies exactly
 * that plan. Returns the number of changes applied (0 when there was nothing to do or the answer was no).
 */
export async function copyConfiguration(
  source: ConfigurationSide,
  target: ConfigurationSide,
  options: {
    prune: boolean
    show: (plan: ConfigurationPlan) => void
    confirm: () => Promise<boolean>
    say: (line: string) => void
  },
): Promise<number> {
  const document = await source.export()
  const plan = await target.plan(document, options.prune)
  options.say(`copying the configuration of ${source.label} to ${target.label}`)
  options.show(plan)
  if (plan.summary.create + plan.summary.update + plan.summary.delete === 0) {
    options.say(`${target.label} already has this configuration; nothing to apply`)
    return 0
  }
  if (!(await options.confirm())) {
    options.say('nothing applied')
    return 0
  }
  const applied = await target.apply(document, options.prune, plan.plan_id)
  options.say(`applied ${applied.applied} change${applied.applied === 1 ? '' : 's'} to ${target.label}`)
  return applied.applied
}
