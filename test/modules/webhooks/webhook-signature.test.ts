import { createHmac, randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { signatureHeader } from '../../../src/modules/webhooks/webhook-signature.js'

const EXPECTED = 'v1,AMaOha7DUT/0J0JMycRuYOBSvbx3WtwLd2khXXbaVj4='

const secret = (): string => `whsec_${randomBytes(24).toString('base64')}`

describe('the webhook signature', () => {
  it('is one the Standard Webhooks library verifies, for each of the secrets', () => {
    const [a, b] = [secret(), secret()]
    const id = 'msg_2b7f'
    const timestamp = String(Math.floor(Date.now() / 1000))
    const body = JSON.stringify({ type: 'use_case.created', data: { name: 'Ünïcode ✓' } })
    const header = signatureHeader(id, timestamp, body, [a, b])
    expect(header.split(' ')).toHaveLength(2)
    const headers = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': header }
    for (const s of [a, b]) expect(new Webhook(s).verify(body, headers)).toEqual(JSON.parse(body))
  })

  it('matches a fixed HMAC-SHA256 of "id.timestamp.body" keyed by the secret after whsec_', () => {
    // The key is the base64 of the bytes 0x00..0x1f; the expected value is computed independently by openssl.
    const key = Buffer.from([...Array(32).keys()]).toString('base64')
    expect(signatureHeader('msg_1', '1700000000', '{"a":1}', [`whsec_${key}`])).toBe(EXPECTED)
  })

  it('is, for each secret, the HMAC-SHA256 that node:crypto computes for a known key, id, timestamp and body', () => {
    const keys = [Buffer.alloc(32, 7), Buffer.from('another signing key')]
    const [id, timestamp, body] = ['msg_known', '1712345678', '{"type":"model.updated","name":"Ünïcode ✓"}']
    const expected = keys
      .map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`)
      .join(' ')
    const secrets = keys.map((key) => `whsec_${key.toString('base64')}`)
    expect(signatureHeader(id, timestamp, body, secrets)).toBe(expected)
  })

  it('fails verification when the body, id or timestamp differ, or with another secret', () => {
    const s = secret()
    const timestamp = String(Math.floor(Date.now() / 1000))
    const header = signatureHeader('msg_1', timestamp, '{"a":1}', [s])
    const verify = (body: string, id: string, ts: string, key = s) =>
      new Webhook(key).verify(body, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': header })
    expect(() => verify('{"a":2}', 'msg_1', timestamp)).toThrow()
    expect(() => verify('{"a":1}', 'msg_2', timestamp)).toThrow()
    expect(() => verify('{"a":1}', 'msg_1', String(Number(timestamp) - 1))).toThrow()
    expect(() => verify('{"a":1}', 'msg_1', timestamp, secret())).toThrow()
  })
})
