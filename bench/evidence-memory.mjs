// npm run bench:evidence: what evidence uploads and downloads cost the service in memory. Runs the service as
// `npm start` does (its heap cap), measures resident memory (VmRSS) before and during a 25 MB upload, a 25 MB
// download and four concurrent 25 MB uploads, and checks every file round-trips by sha256.
//   DATABASE_URL=postgres://…   PostgreSQL instead of SQLite
import { createHash, randomBytes } from 'node:crypto'
import { createClient } from '@aigov/client'
import { API_KEY, freshDatabase, startService, TENANT } from './lib.mjs'

const MB = 1024 * 1024
const SIZE = 25 * MB
const database = await freshDatabase()
const service = await startService(database.url)
const client = createClient({ baseUrl: service.base, apiKey: API_KEY, tenant: TENANT, timeoutMs: 120_000 })

/** A stream of `size` random bytes in 64 KiB pieces, and the sha256 it will have. */
function randomStream(size) {
  const seed = randomBytes(64 * 1024)
  const hash = createHash('sha256')
  let sent = 0
  let n = 0
  const stream = new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close()
      // Vary each piece so no two uploads share content (they would be deduplicated).
      const piece = Buffer.from(seed)
      piece.writeUInt32BE(n++, 0)
      piece.writeDoubleBE(Math.random(), 4)
      const chunk = piece.subarray(0, Math.min(piece.length, size - sent))
      hash.update(chunk)
      sent += chunk.length
      controller.enqueue(chunk)
    },
  })
  return { stream, sha256: () => hash.digest('hex') }
}

/** Runs `work` while sampling the service's RSS every 10 ms; returns the peak rise over the RSS before it. */
async function measure(name, work) {
  await new Promise((r) => setTimeout(r, 500))
  const before = service.rssMb()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, service.rssMb())), 10)
  const started = performance.now()
  const result = await work()
  clearInterval(timer)
  peak = Math.max(peak, service.rssMb())
  const row = {
    name,
    rss_before_mb: +before.toFixed(1),
    rss_peak_mb: +peak.toFixed(1),
    rise_mb: +(peak - before).toFixed(1),
    seconds: +((performance.now() - started) / 1000).toFixed(2),
  }
  console.log(JSON.stringify(row))
  return result
}

async function upload(name) {
  const { stream, sha256 } = randomStream(SIZE)
  const res = await client.evidence.upload(stream, { fileName: `${name}.bin` })
  if (res.error) throw new Error(`${name}: ${JSON.stringify(res.error)}`)
  if (res.data.sha256 !== sha256()) throw new Error(`${name}: sha256 differs`)
  return res.data
}

try {
  // The first upload and download also load the multipart parser and fill caches: reported apart.
  const warm = await measure('first upload 25 MB (cold)', () => upload('warm-up'))
  await measure('first download 25 MB (cold)', async () => {
    for await (const _ of (await client.evidence.download(warm.id)).data) void _
  })

  const one = await measure('upload 25 MB', () => upload('one'))
  await measure('download 25 MB', async () => {
    const res = await client.evidence.download(one.id)
    const hash = createHash('sha256')
    for await (const chunk of res.data) hash.update(chunk)
    if (hash.digest('hex') !== one.sha256) throw new Error('download: sha256 differs')
  })
  await measure('4 concurrent uploads of 25 MB', () => Promise.all([1, 2, 3, 4].map((i) => upload(`parallel-${i}`))))
  console.log(
    JSON.stringify({
      database: database.dialect,
      peak_rss_mb: +service.peakRssMb().toFixed(1),
      service_alive: service.rssMb() > 0,
    }),
  )
} finally {
  await service.stop()
  await database.drop()
}
