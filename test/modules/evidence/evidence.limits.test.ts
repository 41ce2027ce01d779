import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import * as evidenceUsage from '../../../src/db/migrations/2026-12-01T10-evidence-usage.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../../src/main.js'
import type { Deps } from '../../../src/shared/deps.js'
import { multipart } from '../../helpers/governance.js'
import { describeEachDialect, PREFIX, REDIS_URL, startTestApp, type TestApp } from '../../helpers/harness.js'

const KB = 1024
const FILE = 900 * KB

// Issue 52, F5: six parallel 25 MB uploads by one write key stored 2 GB in 20 s; nothing bounded stored bytes.
describeEachDialect('evidence storage quota per tenant and upload budget per key', (dialect) => {
  let t: TestApp
  let base: string
  /** A second instance on the same database (and Redis), as behind a load balancer. */
  let other: { app: FastifyInstance; deps: Deps }
  beforeAll(async () => {
    t = await startTestApp(dialect, {
      EVIDENCE_MAX_MB: '1',
      EVIDENCE_TENANT_QUOTA_MB: '2',
      EVIDENCE_UPLOAD_MB_PER_MINUTE: '4',
      ...(REDIS_URL ? { REDIS_URL } : {}),
    })
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const log = createLogger(t.config)
    const deps = await createDeps(t.config, log, openDatabase(t.config, log))
    other = { app: await buildApp(deps), deps }
    await other.app.ready()
  })
  afterAll(async () => {
    await other?.app.close()
    if (other) await closeDeps(other.deps)
    await t?.close()
  })

  const form = (data: Buffer) =>
    multipart([{ name: 'file', value: data, filename: 'f.bin', type: 'application/octet-stream' }])
  const upload = async (tenant: string, data: Buffer, app: FastifyInstance = t.app) => {
    const { body, contentType } = form(data)
    const token = await t.token(tenant, 'write')
    return app.inject({
      method: 'POST',
      url: `${PREFIX}/evidence`,
      payload: body,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    })
  }
  const usage = async (tenant: string) =>
    (await t.as(tenant, 'write')({ method: 'GET', url: '/evidence/usage' })).json()
  const stored = async (tenant: string) => {
    const db = t.deps.database.db
    const blobs = await db
      .selectFrom('evidence_blobs')
      .select(['size', 'sha256'])
      .where('tenant_id', '=', tenant)
      .execute()
    const chunks = await db
      .selectFrom('evidence_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow()
    return {
      blobs: blobs.length,
      incomplete: blobs.filter((b) => b.sha256 === null).length,
      bytes: blobs.reduce((n, b) => n + Number(b.size), 0),
      chunks: Number(chunks.n),
    }
  }

  /** Sends an upload over a socket, a piece at a time, until the answer comes; reports how much of the body went out. */
  const rawUpload = async (tenant: string, data: Buffer, options: { declareLength: boolean }) => {
    const token = await t.token(tenant, 'write')
    const { body, contentType } = form(data)
    const { port } = new URL(base)
    const socket = connect(Number(port), '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    let answer = ''
    let answered = false
    const done = new Promise<void>((resolve) => {
      socket.on('data', (d) => {
        answer += d.toString('latin1')
        answered = true
        if (/\r\n\r\n[\s\S]*\}$/.test(answer)) resolve()
      })
      socket.on('close', () => resolve())
      socket.on('error', () => resolve())
    })
    const length = options.declareLength ? `content-length: ${body.length}` : 'transfer-encoding: chunked'
    socket.write(
      `POST ${PREFIX}/evidence HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: ${contentType}\r\n${length}\r\n\r\n`,
    )
    let sent = 0
    for (let at = 0; at < body.length && !answered && !socket.destroyed; at += 32 * KB) {
      const piece = body.subarray(at, at + 32 * KB)
      socket.write(
        options.declareLength
          ? piece
          : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]),
      )
      sent += piece.length
      await new Promise((r) => setTimeout(r, 15))
    }
    await done
    socket.destroy()
    const status = Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1])
    return {
      status,
      problem: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n/, '')),
      sent,
      total: body.length,
    }
  }

  it('counts a deduplicated file once, refuses an upload past the quota with 413 saying what is left, and keeps none of it', async () => {
    const a = randomBytes(FILE)
    expect((await upload('quota', a)).statusCode).toBe(201)
    expect((await upload('quota', a)).statusCode).toBe(201) // the same content again: stored once
    expect(await usage('quota')).toMatchObject({
      used_bytes: FILE,
      quota_bytes: 2048 * KB,
      remaining_bytes: 2048 * KB - FILE,
      files: 1,
      uploads_in_progress: 0,
      max_file_bytes: 1024 * KB,
    })
    expect((await upload('quota', randomBytes(FILE))).statusCode).toBe(201)
    const before = await stored('quota')
    expect(before).toMatchObject({ blobs: 2, bytes: 2 * FILE, incomplete: 0 })

    const refused = await upload('quota', randomBytes(FILE))
    expect(refused.statusCode, refused.body).toBe(413)
    expect(refused.headers['content-type']).toContain('application/problem+json')
    expect(refused.json()).toMatchObject({
      code: 'quota_exceeded',
      limit_name: 'evidence_tenant_quota',
      limit_bytes: 2048 * KB,
      used_bytes: 2 * FILE,
      remaining_bytes: 2048 * KB - 2 * FILE,
      detail: expect.stringContaining('EVIDENCE_TENANT_QUOTA_MB'),
    })
    expect(await stored('quota')).toEqual(before)
    expect((await usage('quota')).used_bytes).toBe(2 * FILE)
    // Another tenant has a quota of its own.
    expect((await upload('quota-other', randomBytes(FILE))).statusCode).toBe(201)

    // Deleting evidence gives its bytes back.
    const list = (await t.as('quota', 'read')({ method: 'GET', url: '/evidence' })).json().items as {
      id: string
      sha256: string
    }[]
    const last = list.filter((e) => e.sha256 !== list[0].sha256)
    for (const e of last)
      expect((await t.as('quota', 'write')({ method: 'DELETE', url: `/evidence/${e.id}` })).statusCode).toBe(204)
    expect((await usage('quota')).used_bytes).toBe(FILE)
    expect((await upload('quota', randomBytes(FILE))).statusCode).toBe(201)
  })

  it('lets two parallel uploads on two instances pass the quota together never: exactly one of them is stored', async () => {
    expect((await upload('race', randomBytes(FILE))).statusCode).toBe(201)
    // 1148 KiB left: either upload fits, both do not (each declares at least 672 KiB of file by its Content-Length).
    const results = await Promise.all([
      upload('race', randomBytes(800 * KB)),
      upload('race', randomBytes(800 * KB), other.app),
    ])
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 413])
    expect(await stored('race')).toMatchObject({ blobs: 2, incomplete: 0, bytes: FILE + 800 * KB })
    expect((await usage('race')).used_bytes).toBe(FILE + 800 * KB)
  })

  it('refuses at once an upload whose Content-Length exceeds what is left, before its body is sent', async () => {
    for (let i = 0; i < 2; i++) expect((await upload('early', randomBytes(FILE))).statusCode).toBe(201)
    const before = await stored('early')
    const res = await rawUpload('early', randomBytes(FILE), { declareLength: true })
    expect(res.status).toBe(413)
    expect(res.problem).toMatchObject({ code: 'quota_exceeded', remaining_bytes: 2048 * KB - 2 * FILE })
    expect(res.sent).toBeLessThanOrEqual(64 * KB)
    expect(await stored('early')).toEqual(before)
  })

  it('stops reading a body of unknown length as soon as it passes the quota, and keeps none of it', async () => {
    for (let i = 0; i < 2; i++) expect((await upload('stream', randomBytes(FILE))).statusCode).toBe(201)
    const before = await stored('stream')
    const res = await rawUpload('stream', randomBytes(FILE), { declareLength: false })
    expect(res.status).toBe(413)
    expect(res.problem).toMatchObject({ code: 'quota_exceeded' })
    // What was left (248 KiB) and one chunk more at most, not the whole file.
    expect(res.sent).toBeLessThan(res.total - 200 * KB)
    await new Promise((r) => setTimeout(r, 100))
    expect(await stored('stream')).toEqual(before)
    expect((await usage('stream')).used_bytes).toBe(2 * FILE)
  })

  it('limits the bytes one key uploads per minute (429 with retry_after and what is left), on every instance', async () => {
    const data = randomBytes(FILE)
    // Stored once (deduplicated), yet each upload's bytes count against the key's budget of 4 MiB a minute.
    for (let i = 0; i < 4; i++)
      expect((await upload('budget', data, REDIS_URL && i % 2 ? other.app : t.app)).statusCode).toBe(201)
    const refused = await upload('budget', data, REDIS_URL ? other.app : t.app)
    expect(refused.statusCode, refused.body).toBe(429)
    expect(refused.headers['retry-after']).toMatch(/^\d+$/)
    const problem = refused.json()
    expect(problem).toMatchObject({
      code: 'rate_limited',
      limit_name: 'evidence_upload_budget',
      limit_bytes: 4096 * KB,
      used_bytes: 4 * FILE,
      remaining_bytes: 4096 * KB - 4 * FILE,
      retry_after: expect.any(Number),
      detail: expect.stringContaining('EVIDENCE_UPLOAD_MB_PER_MINUTE'),
    })
    expect(problem.retry_after).toBeGreaterThan(0)
    expect(problem.retry_after).toBeLessThanOrEqual(60)
    expect(await stored('budget')).toMatchObject({ blobs: 1, incomplete: 0 })
    expect((await usage('budget')).upload_budget).toMatchObject({
      limit_bytes: 4096 * KB,
      used_bytes: 4 * FILE,
      remaining_bytes: 4096 * KB - 4 * FILE,
    })
    // Another key of the tenant has its own budget.
    const key = await t.apiKey('budget', 'write')
    const token = (
      await t.app.inject({
        method: 'POST',
        url: `${PREFIX}/auth/token`,
        headers: { 'x-api-key': key, 'x-tenant': 'budget' },
      })
    ).json().access_token
    const { body, contentType } = form(data)
    const fresh = await t.app.inject({
      method: 'POST',
      url: `${PREFIX}/evidence`,
      payload: body,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    })
    expect(fresh.statusCode).toBe(201)
  })

  it('counts what an upgraded database already stores, unfinished uploads included, when it migrates', async () => {
    expect((await upload('migrated', randomBytes(FILE))).statusCode).toBe(201)
    const { db } = t.deps.database
    // An upload a process died in, as earlier versions left it: chunks, and a blob whose size says 0.
    await db
      .insertInto('evidence_blobs')
      .values({
        id: 'evb_unfinished',
        tenant_id: 'migrated',
        sha256: null,
        size: 0,
        chunk_size: 256 * KB,
        chunks: 0,
        created_at: new Date().toISOString(),
      })
      .execute()
    await db
      .insertInto('evidence_chunks')
      .values({ tenant_id: 'migrated', blob_id: 'evb_unfinished', seq: 0, data: randomBytes(1000) })
      .execute()
    await evidenceUsage.down(db)
    await db
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', '2026-12-01T10-evidence-usage' as never)
      .execute()
    expect(await t.migrate()).toEqual(['2026-12-01T10-evidence-usage'])
    expect((await usage('migrated')).used_bytes).toBe(FILE + 1000)
    expect(
      await db.selectFrom('evidence_blobs').select('size').where('id', '=', 'evb_unfinished').executeTakeFirst(),
    ).toEqual({ size: 1000 })
  })

  it('refuses a budget below the largest file at start', async () => {
    const { loadConfig } = await import('../../../src/config.js')
    expect(() => loadConfig({ EVIDENCE_MAX_MB: '25', EVIDENCE_UPLOAD_MB_PER_MINUTE: '10' })).toThrow(
      /EVIDENCE_UPLOAD_MB_PER_MINUTE/,
    )
    expect(() => loadConfig({ EVIDENCE_TENANT_QUOTA_MB: '0' })).toThrow(/EVIDENCE_TENANT_QUOTA_MB/)
    expect(loadConfig({})).toMatchObject({
      evidenceTenantQuotaBytes: 1024 * 1024 * 1024,
      evidenceUploadBytesPerMinute: 100 * 1024 * 1024,
    })
  })
})
