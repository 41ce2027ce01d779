import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './helpers/harness.js'
import { runCli } from './helpers/process.js'
import { type Receiver, startReceiver } from './helpers/receiver.js'

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
    const endpoint = (await admin({ method: 'POST', url: '/webhook_endpoints', payload: { url: receiver.url, events: ['use_case.created'] } })).json()
    await admin({ method: 'PATCH', url: `/webhook_endpoints/${endpoint.id}`, payload: { description: 'touched' } })
    await admin({ method: 'POST', url: '/use_cases', payload: { name: 'Counted' } })
    await receiver.until((got) => got.length === 1)
    // The delivery is recorded just after the receiver answers.
    await new Promise((r) => setTimeout(r, 300))
    const res = runCli(['webhooks', 'list', '--tenant', 'acme'], { DATABASE_URL: t.config.databaseUrl })
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(res.stdout).toContain(endpoint.id)
    expect(res.stdout).toMatch(/healthy\tpending 0\tsucceeded 1\tfailed 0\tlast success 20/)
    expect(runCli(['webhooks', 'list', '--tenant', 'nobody'], { DATABASE_URL: t.config.databaseUrl }).code).toBe(1)
  })
})
