import { createHash, randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import type { Database } from '../../src/db/create-db.js'
import { createEvidenceService } from '../../src/modules/evidence/evidence.service.js'
import { createLogger, openDatabase } from '../../src/main.js'
import { multipart } from '../helpers/governance.js'
import {
  describeEachDialect,
  freshDatabase,
  PREFIX,
  startTestApp,
  type TestApp,
  type TestDatabase,
} from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

// Issue 52, F9: after kill -9 during uploads, the chunks of the unfinished ones stayed until the same tenant uploaded again.

const TENANT = 'uploads'
const KEY = 'sk_crash_uploads_admin_key_0123456789abcdefghijklmn'
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** An upload that declares 5 MB and sends `bytes` of its file, then waits: still arriving, as far as the service knows. */
async function startUpload(baseUrl: string, token: string, bytes: number): Promise<{ socket: Socket; rest: Buffer }> {
  const boundary = 'crashBoundary'
  const file = randomBytes(5 * 1024 * 1024)
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="unfinished.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const url = new URL(baseUrl)
  const socket = connect(Number(url.port), url.hostname)
  socket.on('error', () => undefined)
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  socket.write(
    `POST ${PREFIX}/evidence HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
  )
  await new Promise<void>((resolve) => socket.write(body.subarray(0, bytes), () => resolve()))
  return { socket, rest: body.subarray(bytes) }
}

async function stored(database: Database, tenant: string) {
  const blobs = await database.db
    .selectFrom('evidence_blobs')
    .select(['id', 'sha256', 'size'])
    .where('tenant_id', '=', tenant)
    .execute()
  const chunks = await database.db
    .selectFrom('evidence_chunks')
    .select('blob_id')
    .where('tenant_id', '=', tenant)
    .execute()
  const usage = await database.db
    .selectFrom('evidence_usage')
    .select('bytes')
    .where('tenant_id', '=', tenant)
    .executeTakeFirst()
  const complete = new Set(blobs.filter((b) => b.sha256 !== null).map((b) => b.id))
  return {
    incomplete: blobs.length - complete.size,
    orphanChunks: chunks.filter((c) => !complete.has(c.blob_id)).length,
    usage: Number(usage?.bytes ?? 0),
    completeBytes: blobs.filter((b) => b.sha256 !== null).reduce((n, b) => n + Number(b.size), 0),
  }
}

describeEachDialect('fault: SIGKILL during evidence uploads', (dialect) => {
  let db: TestDatabase | undefined
  let service: ServiceProcess | undefined
  let database: Database | undefined
  afterEach(async () => {
    await service?.stop('SIGKILL')
    await database?.close()
    await db?.drop()
  })

  it('sweeps the chunks of the uploads cut off at the restart, and every acknowledged file stays intact', async () => {
    db = await freshDatabase(dialect)
    const env = {
      ...db.env,
      SERVICE_JWT_SECRET: 'crash-uploads-secret-0123456789abcdefgh',
      SERVICE_API_KEY: KEY,
      SERVICE_TENANT: TENANT,
      SERVICE_STARTER_LIBRARY: 'false',
      RATE_LIMIT_PER_MINUTE: '1000000',
      EVIDENCE_UPLOAD_TIMEOUT_S: '1',
    }
    service = await startServiceProcess(env)
    const config = loadConfig(env)
    database = openDatabase(config, createLogger({ ...config, logLevel: 'silent' }))
    const token = await tokenFor(service.baseUrl)

    const acknowledged = new Map<string, string>() // evidence id -> sha256
    for (let i = 0; i < 3; i++) {
      const data = randomBytes(600_000 + i)
      const { body, contentType } = multipart([
        { name: 'file', value: data, filename: `kept-${i}.bin`, type: 'application/octet-stream' },
      ])
      const res = await fetch(`${service.baseUrl}${PREFIX}/evidence`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      })
      expect(res.status).toBe(201)
      acknowledged.set(((await res.json()) as { id: string }).id, sha(data))
    }
    const uploads = await Promise.all([1, 2, 3].map(() => startUpload(service!.baseUrl, token, 1024 * 1024)))
    await expect
      .poll(async () => (await stored(database!, TENANT)).orphanChunks, { timeout: 10_000, interval: 50 })
      .toBeGreaterThanOrEqual(9)
    service.child.kill('SIGKILL')
    await new Promise((resolve) => service!.child.once('exit', resolve))
    for (const upload of uploads) upload.socket.destroy()
    const cut = await stored(database, TENANT)
    expect(cut.incomplete).toBe(3)

    // Past twice the upload timeout no instance can still be receiving them: the restart's first sweep takes them.
    await new Promise((r) => setTimeout(r, 2500))
    service = await startServiceProcess(env)
    await expect
      .poll(async () => (await stored(database!, TENANT)).incomplete, { timeout: 10_000, interval: 100 })
      .toBe(0)
    const after = await stored(database, TENANT)
    expect(after.orphanChunks).toBe(0)
    expect(after.usage).toBe(after.completeBytes)

    const again = await tokenFor(service.baseUrl)
    for (const [id, hash] of acknowledged) {
      const res = await fetch(`${service.baseUrl}${PREFIX}/evidence/${id}/content`, {
        headers: { authorization: `Bearer ${again}` },
      })
      expect(res.status).toBe(200)
      expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(hash)
    }
    expect(
      (
        await (
          await fetch(`${service.baseUrl}${PREFIX}/evidence/usage`, { headers: { authorization: `Bearer ${again}` } })
        ).json()
      ).uploads_in_progress,
    ).toBe(0)
  }, 60_000)
})

describeEachDialect('evidence sweep with uploads in progress', (dialect) => {
  let t: TestApp | undefined
  afterEach(async () => t?.close())

  it('leaves an upload younger than twice the upload timeout alone, on any tenant, and it completes', async () => {
    t = await startTestApp(dialect)
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const sweeper = createEvidenceService(t.deps)
    const token = await t.token('sweep-live', 'write')
    const upload = await startUpload(base, token, 1024 * 1024)
    await expect
      .poll(async () => (await stored(t!.deps.database, 'sweep-live')).orphanChunks, { timeout: 5000, interval: 50 })
      .toBeGreaterThanOrEqual(3)
    expect(await sweeper.sweepAbandoned()).toBe(0)
    expect((await stored(t.deps.database, 'sweep-live')).incomplete).toBe(1)

    let answer = ''
    upload.socket.on('data', (d) => (answer += d.toString()))
    upload.socket.write(upload.rest)
    await expect.poll(() => answer, { timeout: 10_000, interval: 50 }).toMatch(/"sha256":"[0-9a-f]{64}"/)
    expect(answer).toMatch(/^HTTP\/1\.1 201/)
    upload.socket.destroy()
    expect(await stored(t.deps.database, 'sweep-live')).toMatchObject({ incomplete: 0, orphanChunks: 0 })
  }, 30_000)

  it('sweeps an abandoned upload of every tenant; one that goes on arriving after its sweep answers 408 and leaves nothing', async () => {
    t = await startTestApp(dialect)
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const sweeper = createEvidenceService(t.deps)
    const uploads = []
    for (const tenant of ['sweep-a', 'sweep-b']) {
      uploads.push(await startUpload(base, await t.token(tenant, 'write'), 512 * 1024))
      await expect
        .poll(async () => (await stored(t!.deps.database, tenant)).orphanChunks, { timeout: 5000, interval: 50 })
        .toBeGreaterThanOrEqual(1)
    }
    // As if their process had died a while ago: begun long before the sweep's cutoff.
    await t.deps.database.db
      .updateTable('evidence_blobs')
      .set({ created_at: '2000-01-01T00:00:00.000Z' })
      .where('sha256', 'is', null)
      .execute()
    expect(await sweeper.sweepAbandoned()).toBe(2)
    for (const tenant of ['sweep-a', 'sweep-b'])
      expect(await stored(t.deps.database, tenant)).toEqual({
        incomplete: 0,
        orphanChunks: 0,
        usage: 0,
        completeBytes: 0,
      })

    let answer = ''
    uploads[0].socket.on('data', (d) => (answer += d.toString()))
    uploads[0].socket.write(uploads[0].rest)
    await expect.poll(() => answer, { timeout: 10_000, interval: 50 }).toMatch(/\}$/)
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    for (const upload of uploads) upload.socket.destroy()
    expect(await stored(t.deps.database, 'sweep-a')).toEqual({
      incomplete: 0,
      orphanChunks: 0,
      usage: 0,
      completeBytes: 0,
    })
    expect((await t.as('sweep-a', 'read')({ method: 'GET', url: '/evidence' })).json().items).toEqual([])
  }, 30_000)
})

async function tokenFor(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}${PREFIX}/auth/token`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}
