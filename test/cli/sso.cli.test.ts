import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/harness.js'
import { startOidcProvider, type TestProvider } from '../helpers/oidc-provider.js'
import { CLI } from '../helpers/process.js'

/** The CLI in a child process, awaited (not spawnSync): the provider in this process must answer its discovery. */
function cli(args: string[], env: Record<string, string>, input?: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err.code as number) ?? 1) : 0, stdout, stderr }),
    )
    child.stdin!.end(input ?? '')
  })
}

describe('aigov sso set|show|remove', () => {
  let t: TestApp
  let idp: TestProvider
  let env: Record<string, string>

  beforeAll(async () => {
    t = await startTestApp('sqlite')
    await t.apiKey('acme', 'admin')
    idp = await startOidcProvider(['https://governance.example.com/auth/oidc/callback'])
    env = {
      DATABASE_URL: t.config.databaseUrl,
      SERVICE_JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long',
      SERVICE_PUBLIC_URL: 'https://governance.example.com',
    }
  })
  afterAll(async () => {
    await idp?.close()
    await t?.close()
  })

  it('configures from a secret file, shows without the secret, and removes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aigov-sso-'))
    const file = join(dir, 'secret')
    writeFileSync(file, `${idp.clientSecret}\n`)
    const base = ['--tenant', 'acme', '--issuer', idp.issuer, '--client-id', idp.clientId]
    const set = await cli(['sso', 'set', ...base, '--client-secret-file', file, '--email-domains', 'example.com'], env)
    expect(set.stderr).toBe('')
    expect(set.code).toBe(0)
    expect(set.stdout).toContain(
      'register this redirect URI at the provider: https://governance.example.com/auth/oidc/callback',
    )
    expect(set.stdout).toContain('https://governance.example.com/auth/oidc/start?tenant=acme')
    const show = await cli(['sso', 'show', '--tenant', 'acme', '--json'], env)
    expect(show.code).toBe(0)
    expect(JSON.parse(show.stdout)).toMatchObject({
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      email_domains: ['example.com'],
      provision: false,
    })
    expect(show.stdout).not.toContain(idp.clientSecret)
    // The service reads what the CLI stored, and the audit record names the CLI as its source.
    const api = await t.as('acme', 'admin')({ method: 'GET', url: '/sso' })
    expect(api.json().issuer).toBe(idp.issuer)
    const audit = await t.as('acme', 'admin')({ method: 'GET', url: '/audit_logs?action=sso.configured' })
    expect(audit.json().items[0]).toMatchObject({ source: 'cli' })
    // From standard input too; a bad issuer is one line and exit code 1, and changes nothing.
    const stdin = await cli(['sso', 'set', ...base, '--client-secret-file', '-'], env, idp.clientSecret)
    expect(stdin.code, stdin.stderr).toBe(0)
    const bad = await cli(
      [
        'sso',
        'set',
        '--tenant',
        'acme',
        '--issuer',
        'http://login.example.com',
        '--client-id',
        'x',
        '--client-secret-file',
        file,
      ],
      env,
    )
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim()).toBe(
      'aigov sso set: issuer: must be https (http only for an issuer on a loopback address)',
    )
    expect((await cli(['sso', 'set', '--tenant', 'acme'], env)).code).toBe(2)
    const removed = await cli(['sso', 'remove', '--tenant', 'acme'], env)
    expect(removed.code, removed.stderr).toBe(0)
    expect((await cli(['sso', 'show', '--tenant', 'acme'], env)).code).toBe(1)
  })
})
