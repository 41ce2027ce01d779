import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../src/index.js'
import { startService, type TestService } from './service.js'

let service: TestService
beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await service?.stop()
})

const client = () => createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant })
const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

describe('client evidence', () => {
  it('uploads a Blob and a ReadableStream, and downloads as a stream', async () => {
    const c = client()
    const data = randomBytes(600_000)
    const fromBlob = await c.evidence.upload(new Blob([data]), { fileName: 'model-card.bin', title: 'Model card' })
    expect(fromBlob.error).toBeNull()
    expect(fromBlob.data).toMatchObject({
      kind: 'file',
      fileName: 'model-card.bin',
      title: 'Model card',
      size: data.length,
      sha256: sha(data),
    })

    const streamed = randomBytes(300_000)
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < streamed.length; i += 65_536) controller.enqueue(streamed.subarray(i, i + 65_536))
        controller.close()
      },
    })
    const fromStream = await c.evidence.upload(source, { fileName: 'log "export".csv', contentType: 'text/csv' })
    expect(fromStream.error).toBeNull()
    expect(fromStream.data).toMatchObject({
      fileName: 'log _export_.csv',
      contentType: 'text/csv',
      sha256: sha(streamed),
    })

    const download = await c.evidence.download(fromBlob.data!.id)
    expect(download.error).toBeNull()
    expect(sha(await readAll(download.data!))).toBe(sha(data))

    const missing = await c.evidence.download('ev_00000000000000000000000000')
    expect(missing.error).toMatchObject({ kind: 'not_found', status: 404 })

    const link = await c.evidence.createLink({ kind: 'link', url: 'https://wiki.example.com/x', title: 'Wiki' })
    expect(link.data?.contentPath).toBeNull()
    expect((await c.evidence.list({ kind: 'link' })).data?.items.map((e) => e.id)).toContain(link.data!.id)
  })
})
