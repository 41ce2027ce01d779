import { createHash, randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { multipart } from '../../helpers/governance.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../../helpers/harness.js'

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex')

describeEachDialect('evidence', (dialect) => {
  let t: TestApp
  let base: string
  beforeAll(async () => {
    t = await startTestApp(dialect, { EVIDENCE_MAX_MB: '30' })
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => t?.close())
  const write = () => t.as('acme', 'write')
  const read = () => t.as('acme', 'read')

  const upload = async (
    data: Buffer,
    filename = 'report.pdf',
    extra: { name: string; value: string }[] = [],
    tenant = 'acme',
  ) => {
    const { body, contentType } = multipart([
      ...extra,
      { name: 'file', value: data, filename, type: 'application/pdf' },
    ])
    return t.as(
      tenant,
      'write',
    )({ method: 'POST', url: '/evidence', payload: body, headers: { 'content-type': contentType } })
  }
  const counts = async () => {
    const db = t.deps.database.db
    const blobs = await db
      .selectFrom('evidence_blobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    const chunks = await db
      .selectFrom('evidence_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    const evidence = await db
      .selectFrom('evidence')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return { blobs: Number(blobs.n), chunks: Number(chunks.n), evidence: Number(evidence.n) }
  }

  it('uploads a file, reports its metadata, downloads it with nosniff, attachment, ETag and ranges, and audits it', async () => {
    const data = Buffer.from('%PDF-1.7 oversight procedure\n'.repeat(40))
    const res = await upload(data, 'Oversight procedure – v2.pdf', [{ name: 'title', value: 'Oversight procedure' }])
    expect(res.statusCode, res.body).toBe(201)
    const ev = res.json()
    expect(ev).toMatchObject({
      kind: 'file',
      title: 'Oversight procedure',
      file_name: 'Oversight procedure – v2.pdf',
      content_type: 'application/pdf',
      size: data.length,
      sha256: sha(data),
      url: null,
    })
    expect(ev.id).toMatch(/^ev_[0-9a-z]{26}$/)
    expect(res.headers.location).toBe(`${PREFIX}/evidence/${ev.id}`)
    expect((await read()({ method: 'GET', url: `/evidence/${ev.id}` })).json()).toEqual(ev)

    const content = await read()({ method: 'GET', url: ev.content_path })
    expect(content.statusCode).toBe(200)
    expect(content.rawPayload.equals(data)).toBe(true)
    expect(content.headers['x-content-type-options']).toBe('nosniff')
    expect(content.headers['content-disposition']).toBe(
      `attachment; filename="Oversight procedure _ v2.pdf"; filename*=UTF-8''Oversight%20procedure%20%E2%80%93%20v2.pdf`,
    )
    expect(content.headers.etag).toBe(`"${sha(data)}"`)
    expect(content.headers['content-type']).toBe('application/pdf')

    const notModified = await read()({
      method: 'GET',
      url: ev.content_path,
      headers: { 'if-none-match': `"${sha(data)}"` },
    })
    expect(notModified.statusCode).toBe(304)
    const range = await read()({ method: 'GET', url: ev.content_path, headers: { range: 'bytes=10-19' } })
    expect(range.statusCode).toBe(206)
    expect(range.headers['content-range']).toBe(`bytes 10-19/${data.length}`)
    expect(range.rawPayload.equals(data.subarray(10, 20))).toBe(true)
    const suffix = await read()({ method: 'GET', url: ev.content_path, headers: { range: 'bytes=-5' } })
    expect(suffix.rawPayload.equals(data.subarray(-5))).toBe(true)
    const outside = await read()({ method: 'GET', url: ev.content_path, headers: { range: `bytes=${data.length}-` } })
    expect(outside.statusCode).toBe(416)
    expect(outside.headers['content-range']).toBe(`bytes */${data.length}`)

    const audit = await read()({ method: 'GET', url: `/audit_logs?resource_id=${ev.id}` })
    expect(audit.json().items.map((a: { action: string }) => a.action)).toEqual(['evidence.created'])
  })

  it('serves a file stored with a Content-Type that is no media type (accepted before uploads checked it) as octet-stream', async () => {
    const data = Buffer.from('stored before the check')
    const ev = (await upload(data)).json()
    await t.deps.database.db
      .updateTable('evidence')
      .set({ content_type: 'text/html\nx-injected: 1' })
      .where('id', '=', ev.id)
      .execute()
    const content = await read()({ method: 'GET', url: ev.content_path })
    expect(content.statusCode, content.body).toBe(200)
    expect(content.headers['content-type']).toBe('application/octet-stream')
    expect(content.headers['x-injected']).toBeUndefined()
    expect(content.rawPayload.equals(data)).toBe(true)
  })

  it('stores the same content once per tenant, and keeps it until its last evidence goes', async () => {
    const data = randomBytes(700_000)
    const before = await counts()
    const a = (await upload(data, 'a.bin')).json()
    const b = (await upload(data, 'b.bin')).json()
    expect(a.sha256).toBe(b.sha256)
    const after = await counts()
    expect(after.blobs - before.blobs).toBe(1)
    expect(after.chunks - before.chunks).toBe(3)
    expect((await write()({ method: 'DELETE', url: `/evidence/${a.id}` })).statusCode).toBe(204)
    expect((await read()({ method: 'GET', url: b.content_path })).rawPayload.equals(data)).toBe(true)
    expect((await write()({ method: 'DELETE', url: `/evidence/${b.id}` })).statusCode).toBe(204)
    expect(await counts()).toEqual(before)
  })

  it('keeps tenants apart: another tenant neither sees nor downloads nor shares content', async () => {
    const data = randomBytes(1000)
    const mine = (await upload(data)).json()
    for (const url of [`/evidence/${mine.id}`, mine.content_path])
      expect((await t.as('globex', 'admin')({ method: 'GET', url })).statusCode).toBe(404)
    expect((await t.as('globex', 'admin')({ method: 'DELETE', url: `/evidence/${mine.id}` })).statusCode).toBe(404)
    expect((await t.as('globex', 'read')({ method: 'GET', url: '/evidence?page_limit=100' })).json().items).toEqual([])
    const theirs = (await upload(data, 'same.bin', [], 'globex')).json()
    const blobs = await t.deps.database.db
      .selectFrom('evidence')
      .select('blob_id')
      .where('id', 'in', [mine.id, theirs.id])
      .execute()
    expect(new Set(blobs.map((b) => b.blob_id)).size).toBe(2)
  })

  it('registers links (http(s) only), lists with kind and q filters', async () => {
    const link = await write()({
      method: 'POST',
      url: '/evidence',
      payload: { kind: 'link', url: 'https://wiki.example.com/ai/Model-Card', title: 'Model card' },
    })
    expect(link.statusCode, link.body).toBe(201)
    expect(link.json()).toMatchObject({
      kind: 'link',
      url: 'https://wiki.example.com/ai/Model-Card',
      title: 'Model card',
      content_path: null,
      size: null,
    })
    expect((await read()({ method: 'GET', url: `/evidence/${link.json().id}/content` })).statusCode).toBe(404)
    for (const url of ['javascript:alert(1)', 'ftp://example.com/x', 'not a url']) {
      const bad = await write()({ method: 'POST', url: '/evidence', payload: { kind: 'link', url, title: 'x' } })
      expect(bad.statusCode).toBe(422)
      expect(bad.json().errors[0].field).toBe('url')
    }
    const unknown = await write()({
      method: 'POST',
      url: '/evidence',
      payload: { kind: 'link', url: 'https://a.example', title: 'x', extra: 1 },
    })
    expect(unknown.json().errors).toContainEqual({ field: 'extra', message: 'unknown field' })
    const links = (await read()({ method: 'GET', url: '/evidence?kind=link&q=MODEL-card' })).json().items
    expect(links.map((e: { id: string }) => e.id)).toEqual([link.json().id])
    expect((await read()({ method: 'GET', url: '/evidence?kind=file&q=model-card' })).json().items).toEqual([])
  })

  it('refuses bad uploads with a 4xx problem naming the member, and stores nothing', async () => {
    const before = await counts()
    const noFile = multipart([{ name: 'title', value: 'only a title' }])
    const r1 = await write()({
      method: 'POST',
      url: '/evidence',
      payload: noFile.body,
      headers: { 'content-type': noFile.contentType },
    })
    expect(r1.statusCode).toBe(422)
    expect(r1.json().errors[0].field).toBe('file')
    const otherField = multipart([{ name: 'document', value: 'x', filename: 'x.txt' }])
    const r2 = await write()({
      method: 'POST',
      url: '/evidence',
      payload: otherField.body,
      headers: { 'content-type': otherField.contentType },
    })
    expect(r2.statusCode).toBe(422)
    expect(r2.json().errors[0].field).toBe('document')
    const wrongBoundary = multipart([{ name: 'file', value: 'data', filename: 'x.txt' }], 'sentBoundary')
    const r3 = await write()({
      method: 'POST',
      url: '/evidence',
      payload: wrongBoundary.body,
      headers: { 'content-type': 'multipart/form-data; boundary=declaredBoundary' },
    })
    expect(r3.statusCode, r3.body).toBe(400)
    expect(r3.json().errors[0].field).toBe('file')
    expect(await counts()).toEqual(before)
    expect(
      (
        await t.as(
          'acme',
          'read',
        )({ method: 'POST', url: '/evidence', payload: { kind: 'link', url: 'https://a.example', title: 'x' } })
      ).statusCode,
    ).toBe(403)
  })

  it('refuses a file over EVIDENCE_MAX_MB with 413 and keeps none of it', async () => {
    const small = await startTestApp(dialect, { EVIDENCE_MAX_MB: '1' })
    try {
      const { body, contentType } = multipart([
        { name: 'file', value: Buffer.alloc(1024 * 1024 + 1, 7), filename: 'big.bin' },
      ])
      const res = await small.as(
        'acme',
        'write',
      )({ method: 'POST', url: '/evidence', payload: body, headers: { 'content-type': contentType } })
      expect(res.statusCode).toBe(413)
      expect(res.json().errors[0].field).toBe('file')
      expect(await small.deps.database.db.selectFrom('evidence_chunks').selectAll().execute()).toEqual([])
      expect(await small.deps.database.db.selectFrom('evidence_blobs').selectAll().execute()).toEqual([])
    } finally {
      await small.close()
    }
  })

  it('round-trips 25 MB over a real socket, compared by sha256', async () => {
    const data = randomBytes(25 * 1024 * 1024)
    const form = new FormData()
    form.append('file', new Blob([data], { type: 'application/octet-stream' }), 'big.bin')
    const token = await t.token('acme', 'write')
    const res = await fetch(`${base}${PREFIX}/evidence`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status, await res.clone().text()).toBe(201)
    const ev = await res.json()
    expect(ev.sha256).toBe(sha(data))
    const download = await fetch(`${base}${ev.content_path}`, { headers: { authorization: `Bearer ${token}` } })
    const hash = createHash('sha256')
    for await (const chunk of download.body!) hash.update(chunk)
    expect(hash.digest('hex')).toBe(sha(data))
  })

  it('leaves no rows behind when the client disconnects mid-upload', async () => {
    const before = await counts()
    const token = await t.token('acme', 'write')
    const boundary = 'cutBoundary'
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
    const url = new URL(base)
    const socket = connect(Number(url.port), url.hostname)
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(
      `POST ${PREFIX}/evidence HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n${head}`,
    )
    // Enough to commit several chunks before the client goes away.
    for (let i = 0; i < 8; i++)
      await new Promise<void>((resolve) => socket.write(randomBytes(256 * 1024), () => resolve()))
    await expect
      .poll(async () => (await counts()).chunks, { timeout: 5000, interval: 50 })
      .toBeGreaterThan(before.chunks)
    socket.destroy()
    await expect.poll(counts, { timeout: 5000, interval: 100 }).toEqual(before)
  })
})
