import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/harness.js'
import { runCli } from '../helpers/process.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

describe('aigov webhooks list', () => {
  let t: TestApp
  let receiver: Receiver

  beforeAll(async () => {
    t = await startTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
  })

  it('lists endpoints with their delivery health', async () => {
    const admin = t.as('acme', 'admin')
    const endpoint = (
      await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: receiver.url, events: ['use_case.created'] },
      })
    ).json()
    await admin({ method: 'PATCH', url: `/webhook_endpoints/${endpoint.id}`, payload: { description: 'touched' } })
    await admin({ method: 'POST', url: '/use_cases', payload: { name: 'Counted' } })
    await receiver.until((got) => got.length === 1)
    // The delivery is recorded just after the receiver answers.
    await new Promise((r) => setTimeout(r, 300))
    const res = runCli(['webhooks', 'list', '--tenant', 'acme'], { DATABASE_URL: t.config.databaseUrl })
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(res.stdout).toContain(endpoint.id)
    expect(res.stdout).toMatch(/healthy\tpending 0\tbehind 0\tsucceeded 1\tfailed 0\tlast success 20/)
    expect(runCli(['webhooks', 'list', '--tenant', 'nobody'], { DATABASE_URL: t.config.databaseUrl }).code).toBe(1)
  })
})

describe('aigov webhooks list, with no instance delivering', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await startTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_DELIVERY: 'false' })
  })
  afterAll(async () => t?.close())

  it('counts the audit records not yet queued for each enabled endpoint', async () => {
    const admin = t.as('acme', 'admin')
    const logEnd = async () =>
      (
        await t.deps.database.db
          .selectFrom('tenants')
          .select('audit_seq')
          .where('id', '=', 'acme')
          .executeTakeFirstOrThrow()
      ).audit_seq
    const enabled = (
      await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: 'http://127.0.0.1:9/on', events: ['use_case.created'] },
      })
    ).json()
    const from = (
      await t.deps.database.db
        .selectFrom('webhook_endpoints')
        .select('cursor_seq')
        .where('id', '=', enabled.id)
        .executeTakeFirstOrThrow()
    ).cursor_seq
    const disabled = (
      await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: 'http://127.0.0.1:9/off', events: ['*'], enabled: false },
      })
    ).json()
    for (const name of ['One', 'Two', 'Three'])
      expect((await admin({ method: 'POST', url: '/use_cases', payload: { name } })).statusCode).toBe(201)
    const behind = (await logEnd()) - from
    expect(behind).toBeGreaterThanOrEqual(4)
    const res = runCli(['webhooks', 'list', '--tenant', 'acme'], { DATABASE_URL: t.config.databaseUrl })
    expect(res.code).toBe(0)
    // Every record after its cursor (its own creation's too), whatever it subscribes to; a disabled endpoint takes none.
    expect(res.stdout.split('\n').find((line) => line.startsWith(enabled.id))).toContain(
      `\tpending 0\tbehind ${behind}\t`,
    )
    expect(res.stdout.split('\n').find((line) => line.startsWith(disabled.id))).toContain('\tbehind 0\t')
  })
})
