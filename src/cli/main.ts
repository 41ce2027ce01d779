#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError, type Config, loadConfig } from '../config.js'
import { migrateToLatest } from '../db/migrate.js'
import { seed } from './seed.js'
import { createWebhooksService } from '../modules/webhooks/webhooks.service.js'
import { createApiKeysService } from '../modules/api-keys/api-keys.service.js'
import { createLibraryService } from '../modules/library/library.service.js'
import { tenantProvisioners } from '../modules/tenants/tenant-provisioners.js'
import { createTenantsService } from '../modules/tenants/tenants.service.js'
import { createDeps, createLogger, migrate, openDatabase, serve } from '../main.js'
import { type Role, ROLES, systemCtx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'
import { AppError } from '../http/errors.js'

/** A usage error: printed as one line, exit code 2. */
class UsageError extends Error {}

interface Command {
  usage: string
  summary: string
  options?: ParseArgsConfig['options']
  positionals?: number
  run(args: { values: Record<string, string | boolean | undefined>; positionals: string[] }, config: Config): Promise<void>
}

const out = (line: string) => process.stdout.write(line + '\n')

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'aigov serve',
    summary: 'Start the HTTP service (migrates the database first). Settings come from the environment.',
    run: async (_args, config) => serve(config),
  },
  mcp: {
    usage: 'aigov mcp --stdio',
    summary: 'Serve the MCP tools over stdio for a local assistant, calling the service at SERVICE_API_URL with SERVICE_API_KEY and SERVICE_TENANT. (Over HTTP, the service itself serves /mcp when ENABLE_MCP_SERVER=true.)',
    options: { stdio: { type: 'boolean' } },
    run: async (args, config) => {
      if (!args.values.stdio) throw new UsageError('only --stdio is available here; the HTTP transport is /mcp of "aigov serve" with ENABLE_MCP_SERVER=true')
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
        const tenant = await createTenantsService(deps.database, tenantProvisioners(deps.config)).create(args.positionals[0], 'cli')
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
    summary: 'Add the starter policy library (risk types, scenarios, controls, packs, intake questionnaire) to a tenant, or to every tenant. Existing records are kept; loading twice changes nothing.',
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
          out(records === 0 ? `${id}: already up to date` : `${id}: added the starter library (${records} audited changes)`)
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
        const key = await createApiKeysService(deps).create(systemCtx(tenant, 'cli'), { name: required(args.values, 'name'), role })
        out(`created ${key.id} (${key.role}) for tenant ${tenant}; the secret is shown once:`)
        out(key.key)
      }),
  },
  'keys list': {
    usage: 'aigov keys list --tenant <tenant>',
    summary: 'List the active API keys of a tenant.',
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const service = createApiKeysService(deps)
        let cursor: string | undefined
        do {
          const page = await service.list(systemCtx(tenant, 'cli'), { page_limit: 100, page_after: cursor })
          for (const key of page.items) out(`${key.id}\t${key.role}\t${key.key_prefix}…\t${key.name}\t${key.created_at}`)
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
  'webhooks list': {
    usage: 'aigov webhooks list --tenant <tenant>',
    summary: 'List the webhook endpoints of a tenant with their delivery health (pending, succeeded and failed deliveries of the last 30 days, last success).',
    options: { tenant: { type: 'string' } },
    run: (args, config) =>
      withDeps(config, async (deps) => {
        const tenant = required(args.values, 'tenant')
        await requireTenant(deps, tenant)
        const endpoints = await createWebhooksService(deps).health(systemCtx(tenant, 'cli'))
        if (endpoints.length === 0) out(`tenant ${tenant} has no webhook endpoints`)
        for (const e of endpoints) {
          const state = !e.enabled ? `disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ''}` : e.failing_since ? `failing since ${e.failing_since}` : 'healthy'
          out(`${e.id}\t${e.url}\t${e.events.join(',')}\t${state}\tpending ${e.pending}\tsucceeded ${e.succeeded}\tfailed ${e.failed}\tlast success ${e.last_success_at ?? 'never'}`)
        }
      }),
  },
  seed: {
    usage: 'aigov seed --use-cases N [--audit-logs N] [--tenant t]',
    summary: 'Bulk-load a tenant (default "bench") for scale tests: N use cases, each audited, plus update records up to --audit-logs.',
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
        out(`seeded ${result.useCases} use cases and ${result.auditLogs} audit records in ${((Date.now() - started) / 1000).toFixed(1)} s`)
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

async function requireTenant(deps: Deps, tenant: string): Promise<void> {
  if (!(await createTenantsService(deps.database).exists(tenant))) throw new AppError('not_found', `tenant ${tenant} does not exist`)
}

async function withDeps(config: Config, work: (deps: Deps) => Promise<void>): Promise<void> {
  const log = createLogger({ ...config, logLevel: 'warn' })
  const database = openDatabase(config, log, { maintenance: true })
  try {
    await migrateToLatest(database)
    const deps = await createDeps({ ...config, redisUrl: undefined }, log, database)
    await work(deps)
  } finally {
    await database.close()
  }
}

function helpText(): string {
  const lines = ['aigov: the AI governance integration service', '', 'Commands:']
  for (const command of Object.values(COMMANDS)) lines.push(`  ${command.usage.padEnd(72)} ${command.summary}`)
  lines.push('', 'Run "aigov <command> --help" for one command. Settings are environment variables (see the README).')
  return lines.join('\n')
}

function findCommand(argv: string[]): { name: string; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ')
    if (COMMANDS[name]) return { name, rest: argv.slice(words) }
  }
  return undefined
}

export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    out(helpText())
    return argv.length === 0 ? 2 : 0
  }
  const found = findCommand(argv)
  if (!found) {
    process.stderr.write(`aigov: unknown command "${argv.slice(0, 2).join(' ')}"; run "aigov --help"\n`)
    return 2
  }
  const command = COMMANDS[found.name]
  let parsed
  try {
    parsed = parseArgs({
      args: found.rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
    if (parsed.values.help) {
      out(`usage: ${command.usage}\n\n${command.summary}`)
      return 0
    }
    if (parsed.positionals.length !== (command.positionals ?? 0)) throw new UsageError(`usage: ${command.usage}`)
  } catch (err) {
    process.stderr.write(`aigov ${found.name}: ${(err as Error).message.split('\n')[0]}\n`)
    return 2
  }
  try {
    await command.run({ values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals }, loadConfig())
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
