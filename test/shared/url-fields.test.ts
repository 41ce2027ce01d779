import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

/** Every URL field a client sends takes http(s) URLs with a host and nothing else, refused with a 422 naming it. */
const REFUSED = [
  'javascript:alert(1)',
  'JavaScript:alert(1)',
  'java\tscript:alert(1)',
  ' javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'ftp://example.com/x',
  'mailto:a@example.com',
  'http:example.com',
  'http:\\\\example.com',
  'https:/example.com',
  'http://',
  '//example.com/x',
  'example.com',
  'not a url',
  'https://exa mple.com/',
  'https://example.com/\n',
  ' https://example.com/',
  'https://example.com/ ',
]
const ACCEPTED = [
  'https://vendor.example.com',
  'http://vendor.example.com:8080/path?q=1#top',
  'HTTPS://Vendor.Example.com/Über uns',
  'https://[2001:db8::1]/x',
]

describeEachDialect('URL fields', (dialect) => {
  let t: TestApp
  let write: ReturnType<TestApp['as']>
  let admin: ReturnType<TestApp['as']>
  const auditSeq = async () =>
    (
      await t.deps.database.db
        .selectFrom('tenants')
        .select('audit_seq')
        .where('id', '=', 'acme')
        .executeTakeFirstOrThrow()
    ).audit_seq

  beforeAll(async () => {
    t = await startTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ENABLE_MCP_SERVER: 'true' })
    write = t.as('acme', 'write')
    admin = t.as('acme', 'admin')
    await t.token('acme', 'write')
    await t.token('acme', 'admin')
  })
  afterAll(async () => t?.close())

  const refused = async (
    send: (url: string) => Promise<{ statusCode: number; body: string; json(): any }>,
    field: string,
  ) => {
    const before = await auditSeq()
    for (const url of REFUSED) {
      const res = await send(url)
      expect(res.statusCode, `${JSON.stringify(url)}: ${res.body}`).toBe(422)
      expect(res.json().errors, JSON.stringify(url)).toContainEqual({
        field,
        message: expect.stringMatching(/^must be an http:\/\/ or https:\/\/ URL with a host/),
      })
    }
    expect(await auditSeq()).toBe(before)
  }

  it('vendor website, on create and on update', async () => {
    await refused((website) => write({ method: 'POST', url: '/vendors', payload: { name: 'v', website } }), 'website')
    const vendor = (await write({ method: 'POST', url: '/vendors', payload: { name: 'Patched' } })).json()
    await refused(
      (website) => write({ method: 'PATCH', url: `/vendors/${vendor.id}`, payload: { website } }),
      'website',
    )
    for (const [i, website] of ACCEPTED.entries()) {
      const res = await write({ method: 'POST', url: '/vendors', payload: { name: `Vendor ${i}`, website } })
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().website).toBe(website)
    }
    expect(
      (await write({ method: 'PATCH', url: `/vendors/${vendor.id}`, payload: { website: null } })).statusCode,
    ).toBe(200)
  })

  it('evidence link url', async () => {
    await refused(
      (url) => write({ method: 'POST', url: '/evidence', payload: { kind: 'link', url, title: 'A link' } }),
      'url',
    )
    for (const url of ACCEPTED) {
      const res = await write({ method: 'POST', url: '/evidence', payload: { kind: 'link', url, title: 'A link' } })
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().url).toBe(new URL(url).href)
    }
  })

  it('webhook endpoint url, on create and on update', async () => {
    await refused(
      (url) => admin({ method: 'POST', url: '/webhook_endpoints', payload: { url, events: ['*'], enabled: false } }),
      'url',
    )
    const endpoint = (
      await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: 'https://hooks.example.com/x', events: ['*'], enabled: false },
      })
    ).json()
    await refused(
      (url) => admin({ method: 'PATCH', url: `/webhook_endpoints/${endpoint.id}`, payload: { url } }),
      'url',
    )
    await admin({ method: 'DELETE', url: `/webhook_endpoints/${endpoint.id}` })
  })

  it('vendor website through an MCP tool', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const client = new Client({ name: 'aigov-test', version: '1.0.0' })
    const { port } = t.app.server.address() as { port: number }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token('acme', 'write')}` } },
      }),
    )
    try {
      const res = (await client.callTool({
        name: 'create_vendor',
        arguments: { name: 'Via MCP', website: 'javascript:alert(1)' },
      })) as CallToolResult
      expect(res.isError).toBe(true)
      expect(JSON.stringify(res.content)).toMatch(/website must be an http:\/\/ or https:\/\/ URL with a host/)
    } finally {
      await client.close()
    }
  })
})
