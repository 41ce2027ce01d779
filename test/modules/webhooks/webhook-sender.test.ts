import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { WebhookSender } from '../../../src/modules/webhooks/webhook-sender.js'
import { startReceiver } from '../../helpers/receiver.js'

describe('the webhook sending thread', () => {
  it('answers each send with its own exchange, and Retry-After as the receiver sent it', async () => {
    const r = await startReceiver((n, _req, res) =>
      n % 2 === 0 ? res.writeHead(204).end() : res.writeHead(429, { 'retry-after': '7' }).end(),
    )
    const sender = new WebhookSender({ timeoutMs: 5000 })
    try {
      const answers = await Promise.all(
        [0, 1, 2, 3].map((n) =>
          sender.send(r.url, { 'content-type': 'application/json' }, JSON.stringify({ n }), [], []),
        ),
      )
      const byBody = new Map(r.received.map((got, i) => [got.json.n, i]))
      for (const [n, exchange] of answers.entries()) {
        expect(exchange).toEqual(byBody.get(n)! % 2 === 0 ? { status: 204 } : { status: 429, retryAfter: '7' })
      }
    } finally {
      await sender.stop()
      await r.close()
    }
  })

  it('ends a send in flight when stopped, and refuses sends after', async () => {
    const r = await startReceiver(() => undefined)
    const sender = new WebhookSender({ timeoutMs: 30_000 })
    try {
      const hanging = sender.send(r.url, {}, '{"n":0}', [], [])
      await r.until((got) => got.length === 1)
      await sender.stop()
      expect(await hanging).toEqual({ error: 'the sending thread ended before an answer came' })
      expect(await sender.send(r.url, {}, '{"n":1}', [], [])).toEqual({ error: 'the service is stopping' })
      expect(r.received).toHaveLength(1)
    } finally {
      await r.close()
    }
  })

  it('ends its thread when idle, and starts another for the next send', async () => {
    // The sender's port of each request: a kept-alive connection (the receiver keeps one 5 s) is reused only by the same thread.
    const ports: number[] = []
    const server = createServer((req, res) => {
      ports.push(req.socket.remotePort!)
      req.resume()
      req.on('end', () => res.writeHead(204).end())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    const sender = new WebhookSender({ timeoutMs: 5000, idleMs: 100 })
    try {
      expect(await sender.send(url, {}, '{}', [], [])).toEqual({ status: 204 })
      expect(await sender.send(url, {}, '{}', [], [])).toEqual({ status: 204 })
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(await sender.send(url, {}, '{}', [], [])).toEqual({ status: 204 })
      expect(ports[1]).toBe(ports[0])
      expect(ports[2]).not.toBe(ports[0])
    } finally {
      await sender.stop()
      server.closeAllConnections()
      server.close()
    }
  })

  it('connects a name to the addresses it was given, never looking it up, and to nothing without one', async () => {
    const r = await startReceiver((_n, _req, res) => res.writeHead(204).end())
    const sender = new WebhookSender({ timeoutMs: 2000 })
    try {
      // .invalid never resolves (RFC 6761): the connection can only go to the pinned address.
      const url = r.url.replace('127.0.0.1', 'pinned.invalid')
      expect(await sender.send(url, {}, '{}', [], [{ address: '127.0.0.1', family: 4 }])).toEqual({ status: 204 })
      expect(r.received[0].headers.host).toBe(new URL(url).host)
      expect((await sender.send(url.replace('pinned', 'other'), {}, '{}', [], [])).error).toMatch(
        /^ENOTFOUND: no checked address of other\.invalid/,
      )
      expect(r.received).toHaveLength(1)
    } finally {
      await sender.stop()
      await r.close()
    }
  })

  it('never follows a redirect: the 3xx is the answer, and the target it names receives nothing', async () => {
    const target = await startReceiver()
    const r = await startReceiver((_n, _req, res) => res.writeHead(307, { location: target.url }).end())
    const sender = new WebhookSender({ timeoutMs: 2000 })
    try {
      expect(await sender.send(r.url, {}, '{}', [], [])).toEqual({ status: 307 })
      expect(r.received).toHaveLength(1)
      expect(target.received).toHaveLength(0)
    } finally {
      await sender.stop()
      await r.close()
      await target.close()
    }
  })

  it('reports a receiver that does not answer in time, and one that cannot be reached', async () => {
    const r = await startReceiver(() => undefined)
    const sender = new WebhookSender({ timeoutMs: 200 })
    try {
      expect(await sender.send(r.url, {}, '{}', [], [])).toEqual({ error: 'no answer within 0.2 s' })
      await r.close()
      expect((await sender.send(r.url, {}, '{}', [], [])).error).toMatch(/^ECONNREFUSED: /)
    } finally {
      await sender.stop()
    }
  })
})
