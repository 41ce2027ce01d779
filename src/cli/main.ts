#!/usr/bin/env node
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { sql } from 'kysely'
import { ConfigError, type Config, loadConfig } from '../config.js'
import { seed } from './seed.js'
import { copyConfiguration, hasChanges, localSide, type Payload, remoteSide } from './config-copy.js'
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { createInterface } from 'node:readline/promises'
import { createServices } from '../services.js'
import { parsedJson, parseYaml } from '../modules/configuration/configuration.document.js'
import type { ConfigurationPlan } from '../modules/configuration/configuration.schemas.js'
import { createWebhooksService } from '../modules/webhooks/webhooks.service.js'
import { createApiKeysService } from '../modules/api-keys/api-keys.service.js'
import { createSessionsService } from '../modules/sessions/sessions.service.js'
import { createLibraryService } from '../modules/library/library.service.js'
import { tenantProvisioners } from '../modules/tenants/tenant-provisioners.js'
import { createTenantsService } from '../modules/tenants/tenants.service.js'
import {
  closeDeps,
  createDeps,
  createLogger,
  migrate,
  migrateAndSeal,
  openDatabase,
  serve,
  waitUntilDatabaseAnswers,
} from '../main.js'
import { type Role, ROLES, systemCtx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'
import { AppError } from '../http/errors.js'
import { SERVICE_VERSION } from '../version.js'

/** A usage error: printed as one line, exit code 2. */
class UsageError extends Error {}

interface Command {
  usage: string
  summary: string
  options?: ParseArgsConfig['options']
  positionals?: number
  run(
    args: { values: Record<string, string | boolean | undefined>; positionals: string[] },
    config: Config,
  ): Promise<void>
}

const out = (line: string) => process.stdout.write(`${line}\n`)

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'aigov serve',
    summary: 'Start the HTTP service (migrates the database first). Settings come from the environment.',
    run: async (_args, config) => serve(config),
  },
  mcp: {
    usage: 'aigov mcp --stdio',
    summary:
      'Serve the MCP tools over stdio for a local assistant, calling the service at SERVICE_API_URL with SERVICE_API_KEY and SERVICE_TENANT. (Over HTTP, the service itself serves /mcp when ENABLE_MCP_SERVER=true.)',
    options: { stdio: { type: 'boolean' } },
    run: async (args, config) => {
      if (!args.values.stdio)
        throw new UsageError(
          'only --stdio is available here; the HTTP transport is /mcp of "aigov serve" with ENABLE_MCP_SERVER=true',
        )
      // Loaded here only: `serve` without MCP never pays for the SDK.
      const { serveStdio } = await import('../mcp/stdio.js')
      await serveStdio(config)
    },
  },
  migrate: {
    usage: 'aigov migrate',
    summary: 'Apply pending database migrations and exit.',
    run: async (_args, config) => {
      const applied = await migrate(config, createLogger(config))
      out(applied.length === 0 ? 'database is up to date' : `applied: ${applied.join(', ')}`)
    },
  },
  'tenants create': {
    usage: 'aigov tenants create <tenant>',
    summary: 'Create a tenant.',
    positionals: 1,
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = await createTenantsService(deps.database, tenantProvisioners(deps.config)).create(
          args.positionals[0],
          'cli',
        )
        out(`created tenant ${tenant.id}`)
      }),
  },
  'tenants list': {
    usage: 'aigov tenants list',
    summary: 'List tenants.',
    run: (_args, config) =>
      withDeps(config, async (deps) => {
        for (const tenant of await createTenantsService(deps.database).list()) out(`${tenant.id}\t${tenant.created_at}`)
      }),
  },
  'library load': {
    usage: 'aigov library load [--tenant <tenant>]',
    summary:
      'Add the starter policy library (risk types, scenarios, controls, packs, intake questionnaire) to a tenant, or to every tenant. Existing records are kept; loading twice changes nothing.',
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenants = createTenantsService(deps.database)
        const only = args.values.tenant
        if (typeof only === 'string') await requireTenant(deps, only)
        const ids = typeof only === 'string' ? [only] : (await tenants.list()).map((t) => t.id)
        const library = createLibraryService(deps)
        for (const id of ids) {
          const { records, skipped } = await library.load(id, 'cli')
          out(
            records === 0
              ? `${id}: already up to date`
              : `${id}: added the starter library (${records} audited changes)`,
          )
          for (const reason of skipped) out(`${id}: skipped pack ${reason}`)
        }
      }),
  },
  'keys create': {
    usage: 'aigov keys create --tenant <tenant> --role read|write|admin --name <name>',
    summary: 'Create an API key and print its secret (shown once).',
    options: { tenant: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        const role = required(args.values, 'role') as Role
        if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
        await requireTenant(deps, tenant)
        const key = await createApiKeysService(deps).create(systemCtx(tenant, 'cli'), {
          name: required(args.values, 'name'),
          role,
        })
        out(`created ${key.id} (${key.role}) for tenant ${tenant}; the secret is shown once:`)
        out(key.key)
      }),
  },
  'users login-link': {
    usage: 'aigov users login-link --tenant <tenant> --email <email>',
    summary:
      'Print a one-time sign-in link for a user (valid 15 minutes, usable once), built on SERVICE_PUBLIC_URL. Opening it signs the person in and opens /console.',
    options: { tenant: { type: 'string' }, email: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const link = await createSessionsService(deps).createLoginLink(
          systemCtx(tenant, 'cli'),
          required(args.values, 'email'),
        )
        const base = config.publicUrl ?? `http://localhost:${config.port}`
        if (!config.publicUrl) process.stderr.write(`SERVICE_PUBLIC_URL is unset: the link assumes ${base}\n`)
        out(`${base}/auth/link/${link.token}`)
      }),
  },
  'sso set': {
    usage: 'aigov sso set --tenant <t> --issuer <url> --client-id <id> --client-secret-file <file|->',
    summary:
      "Configure a tenant's single sign-on (OpenID Connect): checks the issuer's discovery document, stores the client secret (read from a file, or - for standard input) encrypted, and prints the redirect URI to register at the provider. --email-domains a.com,b.com admits only those domains; --provision also creates a read user for a new verified email of them.",
    options: {
      tenant: { type: 'string' },
      issuer: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret-file': { type: 'string' },
      'email-domains': { type: 'string' },
      provision: { type: 'boolean' },
    },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const file = required(args.values, 'client-secret-file')
        // A file or standard input, never an argument: arguments show in process lists and shell history.
        const secret = readFileSync(file === '-' ? 0 : file, 'utf8').trim()
        if (!secret) throw new UsageError('the client secret file is empty')
        const domains = args.values['email-domains']
        const saved = await createServices(deps).sso.set(
          systemCtx(tenant, 'cli'),
          {
            issuer: required(args.values, 'issuer'),
            client_id: required(args.values, 'client-id'),
            client_secret: secret,
            ...(typeof domains === 'string' && {
              email_domains: domains
                .split(',')
                .map((d) => d.trim())
                .filter(Boolean),
            }),
            provision: args.values.provision === true,
          },
          cliOrigin(config),
        )
        out(`single sign-on of tenant ${tenant}: ${saved.issuer} (client ${saved.client_id})`)
        out(`register this redirect URI at the provider: ${saved.redirect_uri}`)
        out(`people sign in at: ${saved.sign_in_url}`)
      }),
  },
  'sso show': {
    usage: 'aigov sso show --tenant <tenant> [--json]',
    summary: "Show a tenant's single sign-on configuration (never the client secret).",
    options: { tenant: { type: 'string' }, json: { type: 'boolean' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const sso = await createServices(deps).sso.get(systemCtx(tenant, 'cli'), cliOrigin(config))
        if (args.values.json) {
          out(JSON.stringify(sso))
          return
        }
        out(`issuer\t${sso.issuer}`)
        out(`client_id\t${sso.client_id}`)
        out(`client_secret\t${sso.client_secret_set ? 'set' : 'not set'}`)
        out(`email_domains\t${sso.email_domains.join(',') || '(any)'}`)
        out(`provision\t${sso.provision}`)
        out(`redirect_uri\t${sso.redirect_uri}`)
        out(`sign_in_url\t${sso.sign_in_url}`)
      }),
  },
  'sso remove': {
    usage: 'aigov sso remove --tenant <tenant>',
    summary: "Remove a tenant's single sign-on: people can no longer start signing in with its provider.",
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        await createServices(deps).sso.remove(systemCtx(tenant, 'cli'))
        out(`removed single sign-on of tenant ${tenant}`)
      }),
  },
  'keys list': {
    usage: 'aigov keys list --tenant <tenant> [--json]',
    summary:
      'List the active API keys of a tenant: a table with a header row, or one JSON object per line with --json.',
    options: { tenant: { type: 'string' }, json: { type: 'boolean' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const service = createApiKeysService(deps)
        if (!args.values.json) out(['ID', 'ROLE', 'PREFIX', 'NAME', 'CREATED_AT'].join('\t'))
        let cursor: string | undefined
        do {
          const page = await service.list(systemCtx(tenant, 'cli'), { page_limit: 100, page_after: cursor })
          for (const key of page.items) {
            out(
              args.values.json
                ? JSON.stringify(key)
                : `${key.id}\t${key.role}\t${key.key_prefix}…\t${key.name}\t${key.created_at}`,
            )
          }
          cursor = page.pagination.next_cursor ?? undefined
        } while (cursor)
      }),
  },
  'keys revoke': {
    usage: 'aigov keys revoke <key_id> --tenant <tenant>',
    summary: 'Revoke an API key; its tokens stop working.',
    positionals: 1,
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await createApiKeysService(deps).revoke(systemCtx(tenant, 'cli'), args.positionals[0])
        out(`revoked ${args.positionals[0]}`)
      }),
  },
  backup: {
    usage: 'aigov backup <file>',
    summary:
      'Copy the SQLite database into a new file, consistent, while the service runs (VACUUM INTO). Restore: stop the service, put the file at the DATABASE_URL path, start. PostgreSQL: use pg_dump.',
    positionals: 1,
    run: async (args, config) => {
      if (!config.databaseUrl.startsWith('sqlite:'))
        throw new UsageError('backs up SQLite only; for PostgreSQL use pg_dump (see the README)')
      const target = resolve(args.positionals[0])
      if (existsSync(target)) throw new UsageError(`${target} already exists; choose a new file`)
      const started = Date.now()
      const bytes = await backupSqlite(config, target)
      out(
        `backed up ${config.databaseUrl.slice('sqlite:'.length)} to ${target} (${(bytes / 1024 / 1024).toFixed(1)} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      )
    },
  },
  'webhooks list': {
    usage: 'aigov webhooks list --tenant <tenant>',
    summary:
      'List the webhook endpoints of a tenant with their delivery health (pending, succeeded and failed deliveries of the last 30 days, audit records not yet queued, last success).',
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const endpoints = await createWebhooksService(deps).health(systemCtx(tenant, 'cli'))
        if (endpoints.length === 0) out(`tenant ${tenant} has no webhook endpoints`)
        for (const e of endpoints) {
          const state = !e.enabled
            ? `disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ''}`
            : e.failing_since
              ? `failing since ${e.failing_since}`
              : 'healthy'
          out(
            `${e.id}\t${e.url}\t${e.events.join(',')}\t${state}\tpending ${e.pending}\tbehind ${e.behind}\tsucceeded ${e.succeeded}\tfailed ${e.failed}\tlast success ${e.last_success_at ?? 'never'}`,
          )
        }
      }),
  },
  'config export': {
    usage: 'aigov config export --tenant <tenant> [--format yaml|json] [--include records]',
    summary:
      "Print a tenant's configuration as code (canonical YAML by default, or JSON); with --include records, write the bundle (a tar of the document, the records and the evidence files) instead.",
    options: { tenant: { type: 'string' }, format: { type: 'string' }, include: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        const records = includesRecords(args.values)
        await requireTenant(deps, tenant)
        const configuration = createServices(deps).configuration
        const ctx = systemCtx(tenant, 'cli')
        if (records) {
          if (process.stdout.isTTY) throw new UsageError('the bundle is a tar archive: redirect it to a file (> t.tar)')
          await pipeline(await configuration.exportBundle(ctx), process.stdout)
          return
        }
        const format = args.values.format === 'json' ? 'json' : 'yaml'
        process.stdout.write(await configuration.export(ctx, format))
      }),
  },
  'config plan': {
    usage: 'aigov config plan --tenant <tenant> --file <document.yaml|json|bundle.tar> [--prune]',
    summary:
      'Show what applying a configuration document (or a bundle with records) to a tenant would change (create, update, delete).',
    options: { tenant: { type: 'string' }, file: { type: 'string' }, prune: { type: 'boolean' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const side = localSide(deps, tenant)
        printPlan(await side.plan(readPayload(required(args.values, 'file')), args.values.prune === true))
      }),
  },
  'config apply': {
    usage: 'aigov config apply --tenant <tenant> --file <document.yaml|json|bundle.tar> [--prune] [--yes]',
    summary:
      'Apply a configuration document (or a bundle with records) to a tenant in one transaction, after showing its plan (asks unless --yes).',
    options: {
      tenant: { type: 'string' },
      file: { type: 'string' },
      prune: { type: 'boolean' },
      yes: { type: 'boolean' },
    },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const side = localSide(deps, tenant)
        const payload = readPayload(required(args.values, 'file'))
        const prune = args.values.prune === true
        const plan = await side.plan(payload, prune)
        printPlan(plan)
        if (!hasChanges(plan)) return
        if (args.values.yes !== true && !(await confirm('Apply these changes?'))) {
          out('nothing applied')
          return
        }
        const applied = await side.apply(payload, prune, plan.plan_id)
        out(`applied ${applied.applied} change${applied.applied === 1 ? '' : 's'} to ${tenant}`)
      }),
  },
  'config copy': {
    usage: 'aigov config copy --from <tenant> --to <tenant> [--include records] [--prune] [--yes]',
    summary:
      "Copy a tenant's configuration (with --include records, its use cases, models, vendors and evidence too) onto another tenant: shows the plan, asks unless --yes, applies exactly that plan (if the target changed meanwhile, nothing is applied and the exit code is 1). A tenant is one of the database this command opens (DATABASE_URL), or, with --from-url or --to-url, one of a running service, reached with an API key of that tenant: --from-key <key> or SERVICE_FROM_API_KEY, --to-key <key> or SERVICE_TO_API_KEY (the target's key needs the admin role). --prune deletes what the source does not have.",
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      'from-url': { type: 'string' },
      'from-key': { type: 'string' },
      'to-url': { type: 'string' },
      'to-key': { type: 'string' },
      include: { type: 'string' },
      prune: { type: 'boolean' },
      yes: { type: 'boolean' },
    },
    run: async (args, config) => {
      const records = includesRecords(args.values)
      const from = required(args.values, 'from')
      const to = required(args.values, 'to')
      const end = (side: 'from' | 'to', tenant: string) => {
        const url = args.values[`${side}-url`]
        const given = args.values[`${side}-key`]
        if (typeof given === 'string' && typeof url !== 'string')
          throw new UsageError(`--${side}-key goes with --${side}-url (a local tenant needs no key)`)
        if (typeof url !== 'string') return undefined
        if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))
          throw new UsageError(`--${side}-url must be the service's http(s) address, e.g. https://aigov.example.com`)
        const envName = side === 'from' ? 'SERVICE_FROM_API_KEY' : 'SERVICE_TO_API_KEY'
        const key = typeof given === 'string' && given !== '' ? given : process.env[envName]
        if (!key)
          throw new UsageError(`--${side}-url needs an API key of tenant ${tenant}: --${side}-key or ${envName}`)
        return remoteSide(url, tenant, key)
      }
      const remoteSource = end('from', from)
      const remoteTarget = end('to', to)
      if (!remoteSource && !remoteTarget && from === to)
        throw new UsageError('--from and --to name the same tenant of the same database')
      const copy = async (deps?: Deps) => {
        const local = async (tenant: string) => {
          await requireTenant(deps!, tenant)
          return localSide(deps!, tenant)
        }
        const source = remoteSource ?? (await local(from))
        const target = remoteTarget ?? (await local(to))
        await copyConfiguration(source, target, {
          records,
          prune: args.values.prune === true,
          show: printPlan,
          confirm: () => (args.values.yes === true ? Promise.resolve(true) : confirm('Apply these changes?')),
          say: out,
        })
      }
      // Both ends remote: no database of this machine is opened.
      if (remoteSource && remoteTarget) await copy()
      else await withDeps(config, copy)
    },
  },
  seed: {
    usage: 'aigov seed --use-cases N [--audit-logs N] [--tenant t]',
    summary:
      'Bulk-load a tenant (default "bench") for scale tests: N use cases, each audited, plus update records up to --audit-logs.',
    options: { 'use-cases': { type: 'string' }, 'audit-logs': { type: 'string' }, tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const count = (name: string) => {
          const raw = args.values[name]
          if (raw === undefined) return 0
          if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`)
          return Number(raw)
        }
        const started = Date.now()
        const bar = progressBar()
        const result = await seed(deps.database, tenantProvisioners(deps.config), {
          tenant: typeof args.values.tenant === 'string' ? args.values.tenant : 'bench',
          useCases: count('use-cases'),
          auditLogs: count('audit-logs'),
          progress: bar,
        })
        bar.finish()
        out(
          `seeded ${result.useCases} use cases and ${result.auditLogs} audit records in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        )
      }),
  },
}

/** A one-line progress bar on stderr (redrawn in place on a terminal, every 10 % otherwise). */
function progressBar() {
  let lastShown = -1
  const draw = (done: number, total: number) => {
    const share = total === 0 ? 1 : done / total
    const step = Math.floor(share * (process.stderr.isTTY ? 100 : 10))
    if (step === lastShown) return
    lastShown = step
    const width = 30
    const filled = Math.round(share * width)
    const line = `[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${done}/${total}`
    process.stderr.write(process.stderr.isTTY ? `\r${line}` : `${line}\n`)
  }
  return Object.assign(draw, { finish: () => process.stderr.isTTY && process.stderr.write('\n') })
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

/** Where people reach the service, for the redirect URI the CLI prints: SERVICE_PUBLIC_URL, else this machine. */
function cliOrigin(config: Config): string {
  if (!config.publicUrl) process.stderr.write(`SERVICE_PUBLIC_URL is unset: assuming http://localhost:${config.port}\n`)
  return config.publicUrl ?? `http://localhost:${config.port}`
}

async function requireTenant(deps: Deps, tenant: string): Promise<void> {
  if (!(await createTenantsService(deps.database).exists(tenant)))
    throw new AppError('not_found', `tenant ${tenant} does not exist`)
}

/** VACUUM INTO writes a consistent, compacted copy in one read transaction: writers carry on meanwhile (WAL). */
async function backupSqlite(config: Config, target: string): Promise<number> {
  const log = createLogger({ ...config, logLevel: 'warn' })
  const database = openDatabase(config, log, { maintenance: true })
  try {
    await migrateAndSeal(config, database)
    await sql`vacuum into ${target}`.execute(database.db)
  } finally {
    await database.close()
  }
  return statSync(target).size
}

/** A configuration document from a file: YAML (which JSON also is), with lines and columns for its errors. */
/** What --file names: a bundle (a tar archive, read from the file as it is applied), or a document. */
function readPayload(file: string): Payload {
  if (isTarFile(file)) return { bundle: file }
  const text = readFileSync(file, 'utf8')
  const parsed = file.endsWith('.json') ? parsedJson(JSON.parse(text)) : parseYaml(text)
  return { document: parsed.value as Record<string, unknown>, parsed }
}

/** A tar archive says so at byte 257 of its first header (ustar). */
function isTarFile(file: string): boolean {
  const head = Buffer.alloc(262)
  const fd = openSync(file, 'r')
  try {
    readSync(fd, head, 0, head.length, 0)
  } finally {
    closeSync(fd)
  }
  return head.subarray(257, 262).toString('latin1') === 'ustar'
}

/** --include: only `records` (the bundle) is known. */
function includesRecords(values: Record<string, unknown>): boolean {
  if (values.include === undefined) return false
  if (values.include !== 'records') throw new UsageError('--include takes one value: records')
  return true
}

const paint = (code: number, text: string) => (process.stdout.isTTY ? `\x1b[${code}m${text}\x1b[0m` : text)
const SIGNS = { create: ['+', 32], update: ['~', 33], delete: ['-', 31] } as const

/** A plan as a readable diff: one line per change, its fields' before → after beneath; colour on a terminal. */
function printPlan(plan: ConfigurationPlan): void {
  for (const change of plan.changes) {
    if (change.action === 'unchanged') continue
    const [sign, colour] = SIGNS[change.action]
    out(paint(colour, `${sign} ${change.section} ${change.key}${change.note ? `  (${change.note})` : ''}`))
    for (const [field, c] of Object.entries(change.changes ?? {})) {
      const shown =
        change.action === 'create'
          ? JSON.stringify(c.after)
          : `${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`
      out(paint(colour, `    ${field}: ${shown}`))
    }
  }
  const records = plan.records
  for (const change of records?.changes ?? []) {
    const [sign, colour] = SIGNS[change.action]
    out(paint(colour, `${sign} ${change.kind} ${change.key}${change.fields ? `  (${change.fields.join(', ')})` : ''}`))
  }
  const { create, update, delete: deleted, unchanged } = plan.summary
  out(`plan ${plan.plan_id}: ${create} to create, ${update} to update, ${deleted} to delete, ${unchanged} unchanged`)
  if (records) {
    const r = records.summary
    const unlisted = r.create + r.update - records.changes.length
    out(
      `records: ${r.create} to create, ${r.update} to update, ${r.unchanged} unchanged, ${r.files} files${unlisted > 0 ? ` (${unlisted} changes not listed)` : ''}`,
    )
  }
}

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new UsageError('not a terminal: pass --yes to apply without asking')
  const rl = createInterface({ input: process.stdin, output: process.stdout })
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim())
  } finally {
    rl.close()
  }
}

async function withDeps(config: Config, work: (deps: Deps) => Promise<void>): Promise<void> {
  const log = createLogger({ ...config, logLevel: 'warn' })
  const database = openDatabase(config, log, { maintenance: true })
  let deps: Deps | undefined
  try {
    await waitUntilDatabaseAnswers(config, database, log)
    await migrateAndSeal(config, database)
    // With Redis, as the service has it: a revocation from here reaches every running instance at once.
    deps = await createDeps(config, log, database)
    await work(deps)
  } finally {
    if (deps) await closeDeps(deps)
    else await database.close()
  }
}

const HELP_WIDTH = 100

/** Words of `text` in lines of at most HELP_WIDTH columns, each starting with `indent`. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = []
  let line = indent
  for (const word of text.split(' ')) {
    if (line.length > indent.length && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line)
      line = indent
    }
    line += (line.length > indent.length ? ' ' : '') + word
  }
  return [...lines, line]
}

function commandList(names: string[]): string[] {
  return names.flatMap((name) => [`  ${COMMANDS[name].usage}`, ...wrap(COMMANDS[name].summary, '      ')])
}

function helpText(): string {
  return [
    `aigov ${SERVICE_VERSION}: the AI governance integration service`,
    '',
    'Commands:',
    ...commandList(Object.keys(COMMANDS)),
    '',
    ...wrap(
      'Run "aigov <command> --help" for one command, "aigov --version" for the version. Settings are environment variables (see the README).',
      '',
    ),
  ].join('\n')
}

function findCommand(argv: string[]): { name: string; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ')
    if (COMMANDS[name]) return { name, rest: argv.slice(words) }
  }
  return undefined
}

/** `aigov tenants`: the commands of that group, when the first word names one. */
function groupCommands(word: string | undefined): string[] {
  return Object.keys(COMMANDS).filter((name) => name.startsWith(`${word} `))
}

/** node:util's message for an unknown option, with the options this command does take. */
function optionError(err: Error, command: Command): string {
  const message = err.message.split('\n')[0]
  if (!/^Unknown option/.test(message)) return message
  const valid = [...Object.keys(command.options ?? {}), 'help'].map((name) => `--${name}`)
  return `${message.replace(/\. To specify a positional argument.*$/, '')}; valid options: ${valid.join(', ')}`
}

export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    out(helpText())
    return argv.length === 0 ? 2 : 0
  }
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    out(SERVICE_VERSION)
    return 0
  }
  const found = findCommand(argv)
  if (!found) {
    const group = groupCommands(argv[0])
    if (group.length > 0) {
      const asked = argv.length === 1 || argv[1] === '--help' || argv[1] === '-h'
      const lines = [
        asked
          ? `aigov ${argv[0]}: choose a command:`
          : `aigov ${argv[0]}: unknown command "${argv[1]}"; choose one of:`,
        ...commandList(group),
      ]
      ;(asked ? out : (text: string) => process.stderr.write(`${text}\n`))(lines.join('\n'))
      return argv[1] === '--help' || argv[1] === '-h' ? 0 : 2
    }
    process.stderr.write(`aigov: unknown command "${argv[0]}"; run "aigov --help"\n`)
    return 2
  }
  const command = COMMANDS[found.name]
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({
      args: found.rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
    if (parsed.values.help) {
      out([`usage: ${command.usage}`, '', ...wrap(command.summary, '')].join('\n'))
      return 0
    }
    if (parsed.positionals.length !== (command.positionals ?? 0)) throw new UsageError(`usage: ${command.usage}`)
  } catch (err) {
    process.stderr.write(`aigov ${found.name}: ${optionError(err as Error, command)}\n`)
    return 2
  }
  try {
    await command.run({ values: parsed.values, positionals: parsed.positionals }, loadConfig())
    return 0
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`aigov: bad setting ${err.message}\n`)
    else if (err instanceof UsageError) {
      process.stderr.write(`aigov ${found.name}: ${err.message}\n`)
      return 2
    } else if (err instanceof AppError) process.stderr.write(`aigov ${found.name}: ${err.detail}\n`)
    else process.stderr.write(`aigov ${found.name}: ${(err as Error).message}\n`)
    return 1
  }
}

const code = await main(process.argv.slice(2))
// serve keeps the process alive through its server, mcp through stdin; everything else exits with its code.
if (code !== 0 || !['serve', 'mcp'].includes(process.argv[2] ?? '')) process.exit(code)
