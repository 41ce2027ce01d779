import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { describe } from 'vitest'
import { freshDatabase, PREFIX } from '../helpers/harness.js'
import { runCli, startServiceProcess, type ServiceProcess } from '../helpers/process.js'

const API_KEY = 'sk_backupbackupbackupbackupbackupbackup012345'

async function session(service: ServiceProcess) {
  const token = (
    await (
      await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
        method: 'POST',
        headers: { 'x-api-key': API_KEY, 'x-tenant': 'default' },
      })
    ).json()
  ).access_token as string
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.baseUrl}${PREFIX}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: res.status, body: await res.json() }
  }
  return call
}

describe('aigov backup', () => {
  it('copies a running SQLite database; the copy starts and its audit chain verifies', async () => {
    const db = await freshDatabase('sqlite')
    const env = { ...db.env, SERVICE_API_KEY: API_KEY, SERVICE_STARTER_LIBRARY: 'false' }
    const dir = mkdtempSync(join(tmpdir(), 'aigov-backup-'))
    const target = join(dir, 'backup.db')
    const service = await startServiceProcess(env)
    try {
      const call = await session(service)
      for (const name of ['Alpha', 'Beta', 'Gamma'])
        expect((await call('POST', '/use_cases', { name })).status).toBe(201)
      // Writes keep arriving while the copy is taken.
      const writing = (async () => {
        for (let i = 0; i < 20; i++) await call('POST', '/use_cases', { name: `during ${i}` })
      })()
      const res = runCli(['backup', target], env)
      await writing
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toContain(`to ${target}`)
      expect(runCli(['backup', target], env).code).toBe(2)
    } finally {
      await service.stop()
    }

    const restored = await startServiceProcess({ ...env, DATABASE_URL: `sqlite:${target}` })
    try {
      const call = await session(restored)
      const names = (await call('GET', '/use_cases?page_limit=100')).body.items.map((u: { name: string }) => u.name)
      expect(names.slice(0, 3)).toEqual(['Alpha', 'Beta', 'Gamma'])
      const verified = (await call('GET', '/audit_logs/verify')).body
      expect(verified).toMatchObject({ ok: true, first_bad_id: null })
      expect(verified.checked).toBeGreaterThanOrEqual(4)
      // The copy is a working database: it takes writes, and the tenant's own search index came along.
      expect((await call('POST', '/use_cases', { name: 'After restore' })).status).toBe(201)
      const found = (await call('GET', '/audit_logs?action=use_case.created&q=after%20res')).body.items.map(
        (a: { resource_name: string }) => a.resource_name,
      )
      expect(found).toEqual(['After restore'])
      expect(
        (await call('GET', '/audit_logs?action=use_case.created&q=gamma')).body.items.map(
          (a: { resource_name: string }) => a.resource_name,
        ),
      ).toEqual(['Gamma'])
    } finally {
      await restored.stop()
      await db.drop()
    }
  })

  it('refuses PostgreSQL, pointing at pg_dump', () => {
    const res = runCli(['backup', join(tmpdir(), 'never.db')], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('pg_dump')
    expect(existsSync(join(tmpdir(), 'never.db'))).toBe(false)
  })
})
