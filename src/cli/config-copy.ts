import { AppError } from '../http/errors.js'
import { SOURCE_HEADER } from '../http/plugins/auth.js'
import { parsedJson } from '../modules/configuration/configuration.document.js'
import type { ConfigurationPlan } from '../modules/configuration/configuration.schemas.js'
import { createServices } from '../services.js'
import { systemCtx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'

type Applied = ConfigurationPlan & { applied: number }

/** One end of a copy: a tenant of the database the CLI opens, or of a running service over HTTP. */
export interface ConfigurationSide {
  /** How messages name this end: `tenant acme`, or `tenant acme at https://…`. */
  label: string
  /** The tenant's configuration document, as canonical JSON text. */
  export(): Promise<string>
  plan(document: string, prune: boolean): Promise<ConfigurationPlan>
  apply(document: string, prune: boolean, planId: string): Promise<Applied>
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
    export: () => configuration.export(ctx, 'json'),
    plan: (document, prune) => configuration.plan(ctx, parsedJson(JSON.parse(document)), prune),
    apply: async (document, prune, planId) => {
      try {
        return await configuration.apply(ctx, parsedJson(JSON.parse(document)), { prune, planId })
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') throw new StalePlanError(staleMessage(label))
        throw err
      }
    },
  }
}

const REQUEST_TIMEOUT_MS = 120_000

/**
 * A tenant of a running service, reached with an API key of that tenant (admin for a target). Plain fetch: the
 * document's keys (`apiVersion`, section names) must reach the service exactly as exported, which the
 * TypeScript client's camelCase mapping would not keep.
 */
export function remoteSide(baseUrl: string, tenant: string, apiKey: string): ConfigurationSide {
  const root = `${baseUrl.replace(/\/+$/, '')}/api/v1/integration`
  const label = `tenant ${tenant} at ${baseUrl}`
  let token: string | undefined

  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    try {
      return await fetch(`${root}${path}`, {
        method,
        headers: { accept: 'application/json', [SOURCE_HEADER]: 'cli', 'x-tenant': tenant, ...headers },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message
      throw new Error(`${label}: could not reach the service (${cause})`)
    }
  }
  const failure = async (res: Response, doing: string) => {
    const text = await res.text()
    let detail = text.slice(0, 500)
    try {
      const problem = JSON.parse(text) as { detail?: string; title?: string }
      detail = problem.detail ?? problem.title ?? detail
    } catch {
      // not a problem document: its text as it came
    }
    return new Error(`${label}: ${doing} answered ${res.status}: ${detail}`)
  }
  const call = async (method: string, path: string, doing: string, body?: string): Promise<Response> => {
    if (token === undefined) {
      const res = await send('POST', '/auth/token', { 'x-api-key': apiKey })
      if (!res.ok) throw await failure(res, 'the token exchange')
      token = ((await res.json()) as { access_token: string }).access_token
    }
    const res = await send(
      method,
      path,
      { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    )
    if (res.status === 409 && path.startsWith('/configuration/apply')) throw new StalePlanError(staleMessage(label))
    if (!res.ok) throw await failure(res, doing)
    return res
  }
  return {
    label,
    export: async () => (await call('GET', '/configuration', 'the export')).text(),
    plan: async (document, prune) =>
      (
        await call('POST', `/configuration/plan?prune=${prune}`, 'the plan', document)
      ).json() as Promise<ConfigurationPlan>,
    apply: async (document, prune, planId) =>
      (
        await call(
          'POST',
          `/configuration/apply?prune=${prune}&plan_id=${encodeURIComponent(planId)}`,
          'the apply',
          document,
        )
      ).json() as Promise<Applied>,
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
