import { createWriteStream, openAsBlob } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createClient, type Result } from '@aigov/client'
import { AppError } from '../http/errors.js'
import { SOURCE_HEADER } from '../http/plugins/auth.js'
import { type ParsedDocument, parsedJson } from '../modules/configuration/configuration.document.js'
import type { ConfigurationPlan } from '../modules/configuration/configuration.schemas.js'
import { onDisk } from '../modules/configuration/records.archive.js'
import { createServices } from '../services.js'
import { systemCtx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'

type Applied = ConfigurationPlan & { applied: number }
type Document = Record<string, unknown>
/** What a plan or an apply is given: a document (as parsed, for YAML's lines), or a bundle (a tar archive) in a file. */
export type Payload =
  | { document: Document; parsed?: ParsedDocument; bundle?: undefined }
  | { bundle: string; document?: undefined }

/** One end of a copy: a tenant of the database the CLI opens, or of a running service over HTTP. */
export interface ConfigurationSide {
  /** How messages name this end: `tenant acme`, or `tenant acme at https://…`. */
  label: string
  /** The tenant's configuration document (its JSON form). */
  export(): Promise<Document>
  /** The tenant's bundle (document, records, evidence files) as a stream of tar bytes. */
  exportBundle(): Promise<AsyncIterable<Uint8Array>>
  plan(payload: Payload, prune: boolean): Promise<ConfigurationPlan>
  apply(payload: Payload, prune: boolean, planId: string): Promise<Applied>
}

/** Whether applying the plan would change anything, records included. */
export const hasChanges = (plan: ConfigurationPlan) =>
  plan.summary.create + plan.summary.update + plan.summary.delete > 0 ||
  (plan.records !== undefined && plan.records.summary.create + plan.records.summary.update > 0)

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
    exportBundle: () => configuration.exportBundle(ctx),
    plan: async (payload, prune) =>
      payload.bundle !== undefined
        ? configuration.planBundle(ctx, await onDisk(payload.bundle), prune)
        : configuration.plan(ctx, payload.parsed ?? parsedJson(payload.document), prune),
    apply: async (payload, prune, planId) => {
      try {
        return payload.bundle !== undefined
          ? await configuration.applyBundle(ctx, await onDisk(payload.bundle), { prune, planId })
          : await configuration.apply(ctx, payload.parsed ?? parsedJson(payload.document), { prune, planId })
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
    exportBundle: async () =>
      Readable.fromWeb(
        (await data('the export', client.configuration.exportBundle())) as never,
      ) as AsyncIterable<Uint8Array>,
    plan: async (payload, prune) =>
      payload.bundle !== undefined
        ? data('the plan', client.configuration.planBundle(await openAsBlob(payload.bundle), { prune }))
        : data('the plan', client.configuration.plan(payload.document as never, { prune })),
    apply: async (payload, prune, planId) =>
      payload.bundle !== undefined
        ? data('the apply', client.configuration.applyBundle(await openAsBlob(payload.bundle), { prune, planId }))
        : data('the apply', client.configuration.apply(payload.document as never, { prune, planId })),
  }
}

/**
 * Copies the source's configuration (with `records`, its bundle, kept in a private temporary file meanwhile) onto
 * the target: plans it, shows the plan, asks (`confirm`), applies exactly that plan. Returns the number of changes
 * applied (0 when there was nothing to do or the answer was no).
 */
export async function copyConfiguration(
  source: ConfigurationSide,
  target: ConfigurationSide,
  options: {
    records?: boolean
    prune: boolean
    show: (plan: ConfigurationPlan) => void
    confirm: () => Promise<boolean>
    say: (line: string) => void
  },
): Promise<number> {
  if (!options.records) return planAndApply(source, target, { document: await source.export() }, options)
  const dir = await mkdtemp(join(tmpdir(), 'aigov-copy-'))
  try {
    const bundle = join(dir, 'bundle.tar')
    await pipeline(await source.exportBundle(), createWriteStream(bundle, { mode: 0o600 }))
    return await planAndApply(source, target, { bundle }, options)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

async function planAndApply(
  source: ConfigurationSide,
  target: ConfigurationSide,
  payload: Payload,
  options: Parameters<typeof copyConfiguration>[2],
): Promise<number> {
  const plan = await target.plan(payload, options.prune)
  options.say(`copying the configuration of ${source.label} to ${target.label}`)
  options.show(plan)
  if (!hasChanges(plan)) {
    options.say(`${target.label} already has this configuration; nothing to apply`)
    return 0
  }
  if (!(await options.confirm())) {
    options.say('nothing applied')
    return 0
  }
  const applied = await target.apply(payload, options.prune, plan.plan_id)
  options.say(`applied ${applied.applied} change${applied.applied === 1 ? '' : 's'} to ${target.label}`)
  return applied.applied
}
