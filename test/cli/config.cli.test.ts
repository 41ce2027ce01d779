import { spawn, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { recordLines } from '../helpers/bundles.js'
import { describeEachDialect, freshDatabase, PREFIX, type TestDatabase } from '../helpers/harness.js'
import { CLI, runCli, type ServiceProcess, startServiceProcess } from '../helpers/process.js'

/** A realistic configuration on top of the starter library: stages, custom fields, users, a team, a webhook. */
const DOCUMENT = `apiVersion: aigov/v1
workflow_stages:
  - name: Legal review
    assessment_required: true
  - name: Security review
    description: Pen test and threat model
risk_types:
  - name: Bias
    description: Unfair outcomes
custom_fields:
  - { name: Cost centre, type: string, entity_types: [use_case] }
  - { name: Tier, type: string, element_type: select, options: [gold, silver] }
users:
  - { email: ada@example.com, name: Ada Lovelace, title: Head of model risk }
  - { email: alan@example.com, name: Alan Turing, active: false }
teams:
  - { name: Model risk, description: Second line, members: [ada@example.com, alan@example.com] }
webhook_endpoints:
  - { url: "http://127.0.0.1:9/hooks", events: ["use_case.*"], description: Jira }
`

const ENV = {
  SERVICE_STARTER_LIBRARY: 'false',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  SERVICE_JWT_SECRET: 'config-cli-test-secret-that-is-long-enough',
}

const ok = (res: ReturnType<typeof runCli>) => {
  expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0)
  return res.stdout
}
const exportOf = (env: Record<string, string>, tenant: string) =>
  ok(runCli(['config', 'export', '--tenant', tenant, '--format', 'json'], env))

/** The CLI run without blocking this process (a proxy here must answer while it runs). */
function runCliAsync(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** util-linux `script` runs a command on a pseudo-terminal: the CLI's terminal behaviour (colour, asking). */
const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0

/** The CLI on a terminal, typing `typed` at it; its output with the terminal's line endings made plain. */
function runOnTerminal(args: string[], env: Record<string, string>, typed: string) {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`
  const res = spawnSync('script', ['-qec', [process.execPath, CLI, ...args].map(quote).join(' '), '/dev/null'], {
    env: { PATH: process.env.PATH, ...env },
    input: typed,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { code: res.status, stdout: res.stdout.replaceAll('\r\n', '\n') }
}

/** Creates a tenant (with the starter library and DOCUMENT when `filled`) and an admin key; returns the key. */
function prepareTenant(env: Record<string, string>, tenant: string, file: string, filled: boolean): string {
  ok(runCli(['tenants', 'create', tenant], env))
  if (filled) {
    ok(runCli(['library', 'load', '--tenant', tenant], env))
    ok(runCli(['config', 'apply', '--tenant', tenant, '--file', file, '--yes'], env))
  }
  return ok(runCli(['keys', 'create', '--tenant', tenant, '--role', 'admin', '--name', 'copy'], env))
    .trim()
    .split('\n')
    .pop()!
}

describeEachDialect('aigov config plan, apply and copy within one database', (dialect) => {
  let db: TestDatabase
  let env: Record<string, string>
  let dir: string
  let file: string

  beforeAll(async () => {
    db = await freshDatabase(dialect)
    env = { ...db.env, ...ENV }
    dir = mkdtempSync(join(tmpdir(), 'aigov-config-cli-'))
    file = join(dir, 'governance.yaml')
    writeFileSync(file, DOCUMENT)
    prepareTenant(env, 'sandbox', file, true)
    for (const tenant of ['prod', 'unit', 'empty']) ok(runCli(['tenants', 'create', tenant], env))
  }, 120_000)
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true })
    await db?.drop()
  })

  it('plan prints create, update and delete lines with their fields, without colour off a terminal', () => {
    ok(runCli(['config', 'apply', '--tenant', 'unit', '--file', file, '--yes'], env))
    const changed = join(dir, 'changed.yaml')
    writeFileSync(
      changed,
      DOCUMENT.replace('description: Unfair outcomes', 'description: Unfair outcomes for a protected group')
        .replace('  - name: Security review\n    description: Pen test and threat model\n', '')
        .replace('risk_types:\n', 'risk_types:\n  - name: Privacy\n'),
    )
    const plan = ok(runCli(['config', 'plan', '--tenant', 'unit', '--file', changed, '--prune'], env))
    expect(plan).not.toContain('\x1b[')
    const lines = plan.trimEnd().split('\n')
    expect(lines).toContain('+ risk_types Privacy')
    expect(lines).toContain('    name: "Privacy"')
    expect(lines).toContain('~ risk_types Bias')
    expect(lines).toContain('    description: "Unfair outcomes" → "Unfair outcomes for a protected group"')
    expect(lines).toContain('- workflow_stages Security review')
    expect(lines.at(-1)).toMatch(/^plan plan_\S+: 1 to create, 1 to update, 1 to delete, \d+ unchanged$/)
    // Without --prune nothing is deleted; a plan changes nothing.
    const kept = ok(runCli(['config', 'plan', '--tenant', 'unit', '--file', changed], env))
    expect(kept).not.toContain('- workflow_stages')
    expect(ok(runCli(['config', 'plan', '--tenant', 'unit', '--file', file], env))).toMatch(
      /: 0 to create, 0 to update, 0 to delete, \d+ unchanged\n$/,
    )
  }, 60_000)

  it('apply and copy refuse to apply without --yes when stdin is not a terminal, and change nothing', () => {
    const before = exportOf(env, 'empty')
    const apply = runCli(['config', 'apply', '--tenant', 'empty', '--file', file], env)
    expect(apply.code).toBe(2)
    expect(apply.stdout).toContain('+ workflow_stages Legal review')
    expect(apply.stderr).toContain('not a terminal: pass --yes')
    const copy = runCli(['config', 'copy', '--from', 'sandbox', '--to', 'empty'], env)
    expect(copy.code).toBe(2)
    expect(copy.stderr).toContain('not a terminal: pass --yes')
    expect(exportOf(env, 'empty')).toBe(before)
  }, 60_000)

  it('copies one tenant onto another: the target then exports the same document; a second copy changes nothing', () => {
    const copy = runCli(['config', 'copy', '--from', 'sandbox', '--to', 'prod', '--yes'], env)
    const out = ok(copy)
    expect(copy.stderr).toBe('')
    expect(out).toContain('copying the configuration of tenant sandbox to tenant prod')
    expect(out).toContain('+ users ada@example.com')
    expect(out).toContain('+ teams Model risk')
    expect(out).toMatch(/^applied \d+ changes to tenant prod$/m)
    const source = exportOf(env, 'sandbox')
    expect(JSON.parse(source).policy_controls.length).toBeGreaterThan(0)
    expect(exportOf(env, 'prod')).toBe(source)
    expect(ok(runCli(['config', 'copy', '--from', 'sandbox', '--to', 'prod', '--yes'], env))).toContain(
      'tenant prod already has this configuration; nothing to apply',
    )
  }, 60_000)

  it('exports a bundle with --include records, plans and applies the .tar, and copies records', async () => {
    ok(runCli(['seed', '--use-cases', '5', '--tenant', 'records'], env))
    const bundleOf = (tenant: string, path: string) => {
      const fd = openSync(path, 'w')
      try {
        const res = spawnSync(process.execPath, [CLI, 'config', 'export', '--tenant', tenant, '--include', 'records'], {
          env: { PATH: process.env.PATH, ...env },
          stdio: ['ignore', fd, 'pipe'],
          encoding: 'utf8',
        })
        expect(res.status, res.stderr).toBe(0)
      } finally {
        closeSync(fd)
      }
      return path
    }
    const source = bundleOf('records', join(dir, 't.tar'))
    expect(readFileSync(source).subarray(257, 262).toString('latin1')).toBe('ustar')
    ok(runCli(['tenants', 'create', 'records-copy'], env))
    const plan = ok(runCli(['config', 'plan', '--tenant', 'records-copy', '--file', source], env))
    expect(plan).toMatch(/^\+ use_cases /m)
    expect(plan).toMatch(/^records: 5 to create, 0 to update, 0 unchanged, 0 files$/m)
    expect(ok(runCli(['config', 'apply', '--tenant', 'records-copy', '--file', source, '--yes'], env))).toMatch(
      /^applied \d+ changes to records-copy$/m,
    )
    const records = (path: string) => recordLines(readFileSync(path))
    const copied = await records(bundleOf('records-copy', join(dir, 'copy.tar')))
    expect(copied.length).toBe(5)
    expect(copied).toEqual(await records(source))
    expect(ok(runCli(['config', 'plan', '--tenant', 'records-copy', '--file', source], env))).toMatch(
      /^records: 0 to create, 0 to update, 5 unchanged, 0 files$/m,
    )

    ok(runCli(['tenants', 'create', 'records-copy2'], env))
    const copy = ok(
      runCli(['config', 'copy', '--from', 'records', '--to', 'records-copy2', '--include', 'records', '--yes'], env),
    )
    expect(copy).toMatch(/^records: 5 to create/m)
    expect(await records(bundleOf('records-copy2', join(dir, 'copy2.tar')))).toEqual(await records(source))
    const refused = runCli(['config', 'export', '--tenant', 'records', '--include', 'everything'], env)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--include takes one value: records')
  }, 120_000)

  it('--prune passes through: what the source lacks is deleted only when asked', () => {
    const extra = join(dir, 'extra.yaml')
    writeFileSync(extra, 'apiVersion: aigov/v1\nworkflow_stages:\n  - name: Only in prod\n')
    ok(runCli(['config', 'apply', '--tenant', 'prod', '--file', extra, '--yes'], env))
    const kept = ok(runCli(['config', 'copy', '--from', 'sandbox', '--to', 'prod', '--yes'], env))
    expect(kept).not.toContain('Only in prod')
    expect(exportOf(env, 'prod')).toContain('Only in prod')
    const pruned = ok(runCli(['config', 'copy', '--from', 'sandbox', '--to', 'prod', '--prune', '--yes'], env))
    expect(pruned).toContain('- workflow_stages Only in prod')
    expect(exportOf(env, 'prod')).toBe(exportOf(env, 'sandbox'))
  }, 60_000)

  it.skipIf(!hasScript)(
    'on a terminal: the plan is coloured, and copy asks, applying only on yes',
    () => {
      ok(runCli(['tenants', 'create', 'tty'], env))
      const plan = runOnTerminal(['config', 'plan', '--tenant', 'tty', '--file', file], env, '')
      expect(plan.code).toBe(0)
      expect(plan.stdout).toContain('\x1b[32m+ workflow_stages Legal review\x1b[0m')
      const before = exportOf(env, 'tty')
      const no = runOnTerminal(['config', 'copy', '--from', 'sandbox', '--to', 'tty'], env, 'n\n')
      expect(no.code).toBe(0)
      expect(no.stdout).toContain('Apply these changes? [y/N]')
      expect(no.stdout).toContain('nothing applied')
      expect(exportOf(env, 'tty')).toBe(before)
      const yes = runOnTerminal(['config', 'copy', '--from', 'sandbox', '--to', 'tty'], env, 'y\n')
      expect(yes.code).toBe(0)
      expect(yes.stdout).toMatch(/applied \d+ changes to tenant tty/)
      expect(exportOf(env, 'tty')).toBe(exportOf(env, 'sandbox'))
    },
    60_000,
  )

  it('answers bad arguments with one line and exit code 2, an unknown tenant with 1', () => {
    const cases: [string[], string][] = [
      [['--from', 'sandbox'], '--to is required'],
      [['--from', 'sandbox', '--to', 'sandbox'], 'same tenant'],
      [['--from', 'sandbox', '--to', 'prod', '--to-key', 'sk_x'], '--to-key goes with --to-url'],
      [['--from', 'sandbox', '--to', 'prod', '--to-url', 'ftp://x'], '--to-url must be'],
      [['--from', 'sandbox', '--to', 'prod', '--to-url', 'http://127.0.0.1:9'], 'SERVICE_TO_API_KEY'],
    ]
    for (const [args, message] of cases) {
      const res = runCli(['config', 'copy', ...args], env)
      expect(res.code, args.join(' ')).toBe(2)
      expect(res.stderr.trim().split('\n')).toHaveLength(1)
      expect(res.stderr).toContain(message)
    }
    const unknown = runCli(['config', 'copy', '--from', 'nobody', '--to', 'prod', '--yes'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('tenant nobody does not exist')
    const help = ok(runCli(['config', 'copy', '--help'], env))
    expect(help).toContain('SERVICE_FROM_API_KEY')
    expect(help).toContain('SERVICE_TO_API_KEY')
  }, 60_000)
})

describeEachDialect('aigov config copy between two running services', (dialect) => {
  let dbA: TestDatabase
  let dbB: TestDatabase
  let envA: Record<string, string>
  let envB: Record<string, string>
  let a: ServiceProcess
  let b: ServiceProcess
  let dir: string
  let keyA: string
  let keyRecords: string
  const keysB: Record<string, string> = {}

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aigov-config-copy-'))
    const file = join(dir, 'governance.yaml')
    writeFileSync(file, DOCUMENT)
    dbA = await freshDatabase(dialect)
    dbB = await freshDatabase(dialect)
    envA = { ...dbA.env, ...ENV }
    envB = { ...dbB.env, ...ENV }
    keyA = prepareTenant(envA, 'sandbox', file, true)
    for (const tenant of ['prod', 'mixed', 'stale', 'bundle']) keysB[tenant] = prepareTenant(envB, tenant, file, false)
    keyRecords = prepareTenant(envA, 'records', file, false)
    ok(runCli(['seed', '--use-cases', '3', '--tenant', 'records'], envA))
    a = await startServiceProcess(envA)
    b = await startServiceProcess(envB)
  }, 180_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    rmSync(dir, { recursive: true, force: true })
    await dbA?.drop()
    await dbB?.drop()
  })

  it('copies from one service to another over HTTP, keys from the environment or the command line', async () => {
    const res = await runCliAsync(
      ['config', 'copy', '--from', 'sandbox', '--to', 'prod', '--from-url', a.baseUrl, '--to-url', b.baseUrl, '--yes'],
      // Neither database: both ends are services.
      { SERVICE_FROM_API_KEY: keyA, SERVICE_TO_API_KEY: keysB.prod, DATABASE_URL: 'sqlite:/nonexistent/dir/x.db' },
    )
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain(`to tenant prod at ${b.baseUrl}`)
    expect(res.stdout).toMatch(/^applied \d+ changes to tenant prod at /m)
    const source = exportOf(envA, 'sandbox')
    expect(exportOf(envB, 'prod')).toBe(source)
    // The service's own export says the same.
    const token = (
      await (
        await fetch(`${b.baseUrl}${PREFIX}/auth/token`, {
          method: 'POST',
          headers: { 'x-api-key': keysB.prod, 'x-tenant': 'prod' },
        })
      ).json()
    ).access_token
    const served = await fetch(`${b.baseUrl}${PREFIX}/configuration`, { headers: { authorization: `Bearer ${token}` } })
    expect(await served.text()).toBe(source)
  }, 120_000)

  it('copies records between two services with --include records (the bundle through both clients)', async () => {
    const copy = (...more: string[]) =>
      runCliAsync(
        [
          'config',
          'copy',
          '--from',
          'records',
          '--to',
          'bundle',
          '--from-url',
          a.baseUrl,
          '--to-url',
          b.baseUrl,
        ].concat(['--include', 'records'], more),
        {
          SERVICE_FROM_API_KEY: keyRecords,
          SERVICE_TO_API_KEY: keysB.bundle,
          DATABASE_URL: 'sqlite:/nonexistent/x.db',
        },
      )
    // Off a terminal without --yes: the plan is shown, nothing applied.
    const shown = await copy()
    expect(shown.code).toBe(2)
    expect(shown.stdout).toMatch(/^records: 3 to create, 0 to update, 0 unchanged, 0 files$/m)
    const copied = await copy('--yes')
    expect(copied.code, copied.stderr).toBe(0)
    expect(copied.stdout).toMatch(/^applied \d+ changes to tenant bundle at /m)
    const again = await copy('--yes')
    expect(again.stdout).toMatch(/^records: 0 to create, 0 to update, 3 unchanged, 0 files$/m)
    expect(again.stdout).toContain('already has this configuration; nothing to apply')
  }, 120_000)

  it('copies a local tenant to a service and a service tenant to a local one', async () => {
    const up = await runCliAsync(
      ['config', 'copy', '--from', 'sandbox', '--to', 'mixed', '--to-url', b.baseUrl, '--to-key', keysB.mixed, '--yes'],
      envA,
    )
    expect(up.code, up.stderr).toBe(0)
    expect(exportOf(envB, 'mixed')).toBe(exportOf(envA, 'sandbox'))
    ok(runCli(['tenants', 'create', 'back'], envA))
    const down = await runCliAsync(
      ['config', 'copy', '--from', 'mixed', '--from-url', b.baseUrl, '--to', 'back', '--yes'],
      { ...envA, SERVICE_FROM_API_KEY: keysB.mixed },
    )
    expect(down.code, down.stderr).toBe(0)
    expect(exportOf(envA, 'back')).toBe(exportOf(envA, 'sandbox'))
  }, 120_000)

  it('a bad key is named with its answer; a target changed after the plan gets nothing and a non-zero exit', async () => {
    const bad = await runCliAsync(
      ['config', 'copy', '--from', 'sandbox', '--to', 'stale', '--to-url', b.baseUrl, '--to-key', 'sk_wrong', '--yes'],
      envA,
    )
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain(`tenant stale at ${b.baseUrl}: the plan answered 401`)

    // A proxy in front of B changes the target just before the apply reaches it.
    const before = exportOf(envB, 'stale')
    const proxy: Server = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      if (req.url?.startsWith(`${PREFIX}/configuration/apply`)) {
        const changed = await fetch(`${b.baseUrl}${PREFIX}/workflow_stages`, {
          method: 'POST',
          headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Added meanwhile' }),
        })
        expect(changed.status).toBe(201)
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>
      const answer = await fetch(`${b.baseUrl}${req.url}`, {
        method: req.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      })
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
      res.end(Buffer.from(await answer.arrayBuffer()))
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const port = (proxy.address() as { port: number }).port
    try {
      const stale = await runCliAsync(
        [
          'config',
          'copy',
          '--from',
          'sandbox',
          '--to',
          'stale',
          '--to-url',
          `http://127.0.0.1:${port}`,
          '--to-key',
          keysB.stale,
          '--yes',
        ],
        envA,
      )
      expect(stale.code).not.toBe(0)
      expect(stale.stdout).toContain('+ workflow_stages Legal review')
      expect(stale.stderr).toContain('changed since the plan shown was made; nothing was applied')
    } finally {
      await new Promise((resolve) => proxy.close(resolve))
    }
    // Only the stage added meanwhile: none of the copy.
    const after = JSON.parse(exportOf(envB, 'stale'))
    expect(after.workflow_stages.map((s: { name: string }) => s.name)).toEqual(['Added meanwhile'])
    expect(after.users).toEqual(JSON.parse(before).users)
  }, 120_000)
})
