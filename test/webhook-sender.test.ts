import { describe, expect, it } from 'vitest'
import { WebhookSender } from '../src/modules/webhooks/webhook-sender.js'
import { guardedLookup } from '../src/modules/webhooks/webhook-targets.js'
import { startReceiver } from './helpers/receiver.js'

describe('the webhook sending thread', () => {
  it('answers each send with its own exchange, and Retry-After as the receiver sent it', async () => {
    const r = await startReceiver((n, _req, res) => (n % 2 === 0 ? res.writeHead(204).end() : res.writeHead(429, { 'retry-after': '7' }).end()))
    const sender = new WebhookSender({ timeoutMs: 5000, lookup: guardedLookup(true) })
    try {
      const answers = await Promise.all([0, 1, 2, 3].map((n) => sender.send(r.url, { 'content-type': 'application/json' }, JSON.stringify({ n }))))
      const byBody = new Map(r.received.map((got, i) => [got.json.n, i]))
      for (const [n, exchange] of answers.entries()) {
        expect(exchange).toEqual(byBody.get(n)! % 2 === 0 ? { status: 204 } : { status: 429, retryAfter: '7' })
      }
    } finally {
      await sender.stop()
      await r.close()
    }
  })

  it('ends a send in flight when stopped, and starts a new thread for the next send', async () => {
    const r = await startReceiver((n, _req, res) => (n === 0 ? undefined : res.writeHead(200).end()))
    const sender = new WebhookSender({ timeoutMs: 30_000, lookup: guardedLookup(true) })
    try {
      const hanging = sender.send(r.url, {}, '{"n":0}')
      await r.until((got) => got.length === 1)
      await sender.stop()
      expect(await hanging).toEqual({ error: 'the sending thread ended before an answer came' })
      expect(await sender.send(r.url, {}, '{"n":1}')).toEqual({ status: 200 })
    } finally {
      await sender.stop()
      await r.close()
    }
  })

  it('reports a receiver that does not answer in time, and one that cannot be reached', async () => {
    const r = await startReceiver(() => undefined)
    const sender = new WebhookSender({ timeoutMs: 200, lookup: guardedLookup(true) })
    try {
      expect(await sender.send(r.url, {}, '{}')).toEqual({ error: 'no answer within 0.2 s' })
      await r.close()
      expect((await sender.send(r.url, {}, '{}')).error).toMatch(/^ECONNREFUSED: /)
    } finally {
      await sender.stop()
    }
  })
})
