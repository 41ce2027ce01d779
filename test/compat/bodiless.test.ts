import net from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Sends these exact bytes over a fresh TCP connection and reads one response (by its Content-Length). */
function rawRequest(port: number, bytes: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes))
    let data = Buffer.alloc(0)
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk])
      const end = data.indexOf('\r\n\r\n')
      if (end < 0) return
      const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n')
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      )
      const length = Number(headers['content-length'] ?? 0)
      if (data.length - end - 4 < length) return
      socket.destroy()
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
      })
    })
    socket.on('error', reject)
  })
}

/**
 * What each library puts on the wire for "POST with these headers and a null body", captured from the libraries
 * themselves (python-requests 2.34, curl 7.88, Node 20 fetch and http.request) or from their source (httpx, axios 0.x
 * with its default form content type). {{AUTH}} stands for the library user's own headers.
 */
const NULL_BODY_REQUESTS: Record<string, (path: string, host: string) => string> = {
  'python-requests post(url, headers=h)': (path, host) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: python-requests/2.34.2\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: keep-alive\r\n{{AUTH}}Content-Length: 0\r\n\r\n`,
  'httpx post(url, headers=h)': (path, host) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\nUser-Agent: python-httpx/0.27.2\r\n{{AUTH}}Content-Length: 0\r\n\r\n`,
  'axios post(url, null, {headers})': (path, host) =>
    `POST ${path} HTTP/1.1\r\nAccept: application/json, text/plain, */*\r\nContent-Type: application/x-www-form-urlencoded\r\n{{AUTH}}User-Agent: axios/0.27.2\r\nHost: ${host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
  "curl -X POST -d ''": (path, host) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n{{AUTH}}Content-Length: 0\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n`,
  'curl -X POST (no body at all)': (path, host) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n{{AUTH}}\r\n`,
  "fetch(url, {method: 'POST', body: ''})": (path, host) =>
    `POST ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n{{AUTH}}content-type: text/plain;charset=UTF-8\r\naccept: */*\r\naccept-language: *\r\nsec-fetch-mode: cors\r\nuser-agent: node\r\naccept-encoding: gzip, deflate\r\ncontent-length: 0\r\n\r\n`,
  'fetch(url, {method: POST, body: new URLSearchParams()})': (path, host) =>
    `POST ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n{{AUTH}}content-type: application/x-www-form-urlencoded;charset=UTF-8\r\naccept: */*\r\naccept-language: *\r\nsec-fetch-mode: cors\r\nuser-agent: node\r\naccept-encoding: gzip, deflate\r\ncontent-length: 0\r\n\r\n`,
  'http.request with a JSON content type, chunked, ended without data': (path, host) =>
    `POST ${path} HTTP/1.1\r\nContent-Type: application/json\r\n{{AUTH}}Host: ${host}\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  'http.request with text/plain, chunked, ended without data': (path, host) =>
    `POST ${path} HTTP/1.1\r\nContent-Type: text/plain\r\n{{AUTH}}Host: ${host}\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
}

describeEachDialect('bodiless requests under any content type, over real sockets', (dialect) => {
  let t: TestApp
  let port: number
  let host: string
  beforeAll(async () => {
    t = await startTestApp(dialect)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as net.AddressInfo).port
    host = `127.0.0.1:${port}`
  })
  afterAll(async () => t?.close())

  const send = (
    template: (path: string, host: string) => string,
    method: string,
    path: string,
    auth: Record<string, string>,
  ) =>
    rawRequest(
      port,
      template(PREFIX + path, host)
        .replace(/^POST/, method)
        .replace(
          '{{AUTH}}',
          Object.entries(auth)
            .map(([k, v]) => `${k}: ${v}\r\n`)
            .join(''),
        ),
    )

  it.each(Object.keys(NULL_BODY_REQUESTS))('issues a token for headers only, sent as %s', async (library) => {
    const key = await t.apiKey('acme', 'read')
    const res = await send(NULL_BODY_REQUESTS[library], 'POST', '/auth/token', { 'X-API-Key': key, 'X-Tenant': 'acme' })
    expect(res.status, res.body).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) })
  })

  it('runs bodiless POSTs and DELETEs sent with a form or text content type', async () => {
    const bearer = { Authorization: `Bearer ${await t.token('acme', 'write')}` }
    const id = (
      await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Bodiless' } })
    ).json().id
    const advanced = await send(
      NULL_BODY_REQUESTS["curl -X POST -d ''"],
      'POST',
      `/use_cases/${id}/workflow/advance`,
      bearer,
    )
    expect(advanced.status, advanced.body).toBe(200)
    const deleted = await send(
      NULL_BODY_REQUESTS["fetch(url, {method: 'POST', body: ''})"],
      'DELETE',
      `/use_cases/${id}`,
      bearer,
    )
    expect(deleted.status, deleted.body).toBe(204)
  })

  it('answers an empty body on a route that needs one with 422 naming the body, and creates nothing', async () => {
    const bearer = { Authorization: `Bearer ${await t.token('empty', 'write')}` }
    for (const library of [
      'axios post(url, null, {headers})',
      'http.request with a JSON content type, chunked, ended without data',
      'python-requests post(url, headers=h)',
    ]) {
      const res = await send(NULL_BODY_REQUESTS[library], 'POST', '/use_cases', bearer)
      expect(res.status, library).toBe(422)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(JSON.parse(res.body)).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: '(body)', message: 'is required' }],
      })
    }
    expect((await t.as('empty', 'read')({ method: 'GET', url: '/use_cases' })).json().items).toEqual([])
  })

  it('still answers a non-empty body of another type with 415, by length or chunked, and creates nothing', async () => {
    const auth = `Authorization: Bearer ${await t.token('typed', 'write')}\r\n`
    const form = 'name=Typed'
    const byLength = await rawRequest(
      port,
      `POST ${PREFIX}/use_cases HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`,
    )
    expect(byLength.status).toBe(415)
    expect(JSON.parse(byLength.body).code).toBe('unsupported_media_type')
    const chunked = await rawRequest(
      port,
      `POST ${PREFIX}/use_cases HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n${form.length.toString(16)}\r\n${form}\r\n0\r\n\r\n`,
    )
    expect(chunked.status).toBe(415)
    const untyped = await rawRequest(
      port,
      `POST ${PREFIX}/use_cases HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: 17\r\n\r\n{"name": "Typed"}`,
    )
    expect(untyped.status).toBe(415)
    expect(JSON.parse(untyped.body).detail).toContain('Content-Type: application/json')
    expect((await t.as('typed', 'read')({ method: 'GET', url: '/use_cases' })).json().items).toEqual([])
  })
})
