import { expect, it } from 'vitest'
import { afterAll, beforeAll } from 'vitest'
import { describeEachDialect, freshDatabase, type TestDatabase } from '../helpers/harness.js'
import { runCli } from '../helpers/process.js'

describeEachDialect('aigov CLI', (dialect) => {
  let db: TestDatabase
  let env: Record<string, string>
  beforeAll(async () => {
    db = await freshDatabase(dialect)
    env = { ...db.env, SERVICE_STARTER_LIBRARY: 'false' }
  })
  afterAll(async () => db.drop())

  it('prints help for the program and for each command', () => {
    const help = runCli(['--help'], env)
    expect(help.code).toBe(0)
    for (const word of [
      'serve',
      'migrate',
      'tenants create',
      'tenants list',
      'keys create',
      'keys list',
      'keys revoke',
    ])
      expect(help.stdout).toContain(word)
    const keysHelp = runCli(['keys', 'create', '--help'], env)
    expect(keysHelp.code).toBe(0)
    expect(keysHelp.stdout).toContain('--role read|write|admin')
  })

  it('answers an unknown command or option with one line and exit code 2', () => {
    const unknown = runCli(['frobnicate'], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1)
    const badOption = runCli(['tenants', 'list', '--colour', 'red'], env)
    expect(badOption.code).toBe(2)
    expect(badOption.stderr.trim().split('\n')).toHaveLength(1)
    expect(badOption.stderr).toContain('--colour')
    expect(runCli(['keys', 'create', '--tenant', 't', '--role', 'god', '--name', 'x'], env).code).toBe(2)
  })

  it("prints its version, lists a group's commands, names valid options, and keeps help within 100 columns", () => {
    const version = runCli(['--version'], env)
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const group = runCli(['tenants'], env)
    expect(group.code).toBe(2)
    expect(group.stdout).toContain('aigov tenants create <tenant>')
    expect(group.stdout).toContain('aigov tenants list')
    expect(group.stdout).not.toContain('keys')
    const badOption = runCli(['keys', 'list', '--colour', 'red'], env)
    expect(badOption.stderr).toContain("Unknown option '--colour'; valid options: --tenant, --json, --help")
    // Commands' own help wraps their summaries as the overview does.
    const helps = [runCli(['--help'], env).stdout, runCli(['mcp', '--help'], env).stdout]
    for (const line of helps.join('\n').split('\n')) expect(line.length, line).toBeLessThanOrEqual(100)
  })

  it('stops with one line naming a bad setting', () => {
    const res = runCli(['migrate'], { ...env, SERVICE_TOKEN_TTL: 'soon' })
    expect(res.code).toBe(1)
    expect(res.stderr.trim().split('\n')).toHaveLength(1)
    expect(res.stderr).toContain('SERVICE_TOKEN_TTL')
  })

  it('migrates, manages tenants and keys', () => {
    expect(runCli(['migrate'], env).code).toBe(0)
    expect(runCli(['migrate'], env).stdout).toContain('up to date')
    const created = runCli(['tenants', 'create', 'acme'], env)
    expect(created.code, created.stderr).toBe(0)
    expect(runCli(['tenants', 'create', 'acme'], env).code).toBe(1)
    expect(runCli(['tenants', 'create', 'Bad Name'], env).code).toBe(1)
    expect(runCli(['tenants', 'list'], env).stdout).toMatch(/^acme\t/m)

    const key = runCli(['keys', 'create', '--tenant', 'acme', '--role', 'write', '--name', 'ci'], env)
    expect(key.code, key.stderr).toBe(0)
    const secret = key.stdout.trim().split('\n').pop()!
    expect(secret).toMatch(/^sk_[0-9A-Za-z]{43}$/)
    const id = /created (key_\w+)/.exec(key.stdout)![1]
    const listed = runCli(['keys', 'list', '--tenant', 'acme'], env)
    expect(listed.stdout.split('\n')[0]).toBe('ID\tROLE\tPREFIX\tNAME\tCREATED_AT')
    expect(listed.stdout).toContain(id)
    expect(listed.stdout).not.toContain(secret)
    const json = runCli(['keys', 'list', '--tenant', 'acme', '--json'], env)
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(json).toContainEqual(expect.objectContaining({ id, role: 'write', name: 'ci' }))
    expect(JSON.stringify(json)).not.toContain(secret)
    expect(runCli(['keys', 'create', '--tenant', 'nobody', '--role', 'read', '--name', 'x'], env).code).toBe(1)
    expect(runCli(['keys', 'revoke', id, '--tenant', 'acme'], env).code).toBe(0)
    expect(runCli(['keys', 'list', '--tenant', 'acme'], env).stdout).not.toContain(id)
  }, 60_000)
})
