import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/http/errors.js'
import { checkBundle } from '../../src/modules/configuration/records.archive.js'
import { archive, fileEntry, tenantCounts } from '../helpers/bundles.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// Reproduce a failure with FUZZ_SEED=<seed>; run longer with FUZZ_RUNS=<n>.
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const SEED = Number(process.env.FUZZ_SEED ?? 20261202)

const vendor = (owner: object | null) =>
  `${JSON.stringify({ name: 'Fuzzed', description: null, website: null, status: 'active', owner, custom_fields: {} })}\n`

/**
 * A bundle that can apply nothing whatever a few changed bytes do to it: its document has no sections, its one
 * vendor's owner is a user no tenant has (a changed byte leaves it an unknown user or breaks the line), and its file
 * is named by no evidence record (stored files nothing adopts are discarded).
 */
const base = () =>
  archive([
    ['configuration.yaml', 'apiVersion: aigov/v1\n'],
    ['records/vendors/000001.ndjson', vendor({ email: 'nobody@example.com' })],
    fileEntry(Buffer.from('fuzzed evidence\n'.repeat(40))),
  ])

/** Random damage to an archive: bytes overwritten, a cut, or bytes added at the end. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('bytes' as const), at: fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 8 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), data: fc.uint8Array({ maxLength: 1200 }) }),
)
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never

const mutate = (bytes: Buffer, m: Mutation): Buffer => {
  if (m.kind === 'cut') return bytes.subarray(0, m.at % bytes.length)
  if (m.kind === 'append') return Buffer.concat([bytes, m.data])
  const out = Buffer.from(bytes)
  for (const [at, value] of m.at) out[at % out.length] = value
  return out
}

describe('configuration bundle reader (fuzz)', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aigov-bundle-fuzz-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const limits = { maxBytes: 1024 * 1024, maxFiles: 3, maxDocumentBytes: 64 * 1024 }
  /** Whatever the bytes, the reader answers a checked bundle or a 4xx AppError: never another error, never a hang. */
  const readsOrRefuses = async (bytes: Uint8Array) => {
    const path = join(dir, 'bundle.tar')
    writeFileSync(path, bytes)
    try {
      await checkBundle(path, limits)
    } catch (err) {
      expect(err).toBeInstanceOf(AppError)
      expect([413, 422]).toContain((err as AppError).status)
    }
  }

  it('answers arbitrary bytes with a bundle or a 4xx', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), readsOrRefuses), {
      numRuns: RUNS,
      seed: SEED,
    })
  })

  it('answers damaged archives with a bundle or a 4xx', async () => {
    const bytes = await base()
    await fc.assert(
      fc.asyncProperty(mutation, (m) => readsOrRefuses(mutate(bytes, m))),
      { numRuns: RUNS, seed: SEED },
    )
  })
})

describeEachDialect('configuration bundle apply (fuzz)', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { CONFIGURATION_BUNDLE_MAX_FILES: '3' })
  })
  afterAll(async () => t?.close())

  it('answers damaged bundles with a 4xx problem (or a 200 that applied nothing), and changes nothing', async () => {
    const admin = t.as('fuzz', 'admin')
    await admin({ method: 'GET', url: '/risk_types' })
    const before = await tenantCounts(t.deps.database, 'fuzz')
    const bytes = await base()
    await fc.assert(
      fc.asyncProperty(mutation, fc.constantFrom('/configuration/plan', '/configuration/apply'), async (m, url) => {
        const res = await admin({
          method: 'POST',
          url,
          payload: mutate(bytes, m),
          headers: { 'content-type': 'application/x-tar' },
        })
        if (res.statusCode === 200) {
          if (url.endsWith('/apply')) expect(res.json().applied, res.body).toBe(0)
          return
        }
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400)
        expect(res.statusCode, res.body).toBeLessThan(500)
        expect(res.headers['content-type']).toContain('application/problem+json')
        expect(typeof res.json().detail).toBe('string')
      }),
      { numRuns: Math.ceil(RUNS / 3), seed: SEED },
    )
    expect(await tenantCounts(t.deps.database, 'fuzz')).toEqual(before)
  }, 120_000)
})
