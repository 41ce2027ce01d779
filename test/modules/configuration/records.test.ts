import { createHash } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { archive, entries, fileEntry, tenantCounts } from '../../helpers/bundles.js'
import { multipart } from '../../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

type Call = ReturnType<TestApp['as']>
const USE_CASES = Number(process.env.RECORDS_TEST_USE_CASES ?? 1000)
const FILES = Number(process.env.RECORDS_TEST_FILES ?? 20)
const tarType = { 'content-type': 'application/x-tar' }

/** Every record of a bundle by kind and natural key, and every file's sha256. */
const recordsOf = (files: Map<string, Buffer>) => {
  const records = new Map<string, unknown>()
  const hashes: string[] = []
  for (const [name, data] of files) {
    const kind = /^records\/([a-z_]+)\//.exec(name)?.[1]
    if (kind) {
      for (const line of data.toString().split('\n').filter(Boolean)) {
        const r = JSON.parse(line)
        records.set(`${kind} ${r.key ?? r.name}`, r)
      }
    } else if (name.startsWith('files/')) {
      expect(createHash('sha256').update(data).digest('hex')).toBe(name.slice(6))
      hashes.push(name.slice(6))
    }
  }
  return { records, hashes }
}

describeEachDialect('configuration bundles with records', (dialect) => {
  let t: TestApp
  let source: Call
  let bundle: Buffer

  const ok = async (call: Call, url: string, payload: object) => {
    const res = await call({ method: 'POST', url, payload })
    expect(res.statusCode, res.body).toBeLessThan(300)
    return res.json()
  }

  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_STARTER_LIBRARY: 'true', CONFIGURATION_BUNDLE_MAX_FILES: '30' })
    source = t.as('src', 'admin')
    await ok(source, '/custom_fields', { name: 'Cost centre', type: 'string', entity_types: ['use_case', 'vendor'] })
    const fields = (await source({ method: 'GET', url: '/custom_fields' })).json().items
    const costCentre = fields.find((f: { name: string }) => f.name === 'Cost centre').id
    const ada = await ok(source, '/users', { email: 'ada@example.com', name: 'Ada Lovelace' })
    const team = await ok(source, '/teams', { name: 'Model risk' })
    const vendor = await ok(source, '/vendors', {
      name: 'Acme AI',
      owner: { owner_id: team.id },
      custom_fields: [{ custom_field_id: costCentre, value: 'CC-1' }],
    })
    const model = await ok(source, '/models', { name: 'Scorer', provider: 'in-house', owner: { owner_id: ada.id } })
    await ok(source, `/models/${model.id}/vendors`, { id: vendor.id })
    const evidence: string[] = []
    for (let i = 0; i < FILES; i++) {
      const { body, contentType } = multipart([
        {
          name: 'file',
          value: Buffer.from(`report ${i}\n`.repeat(1000 + i)),
          filename: `r${i}.txt`,
          type: 'text/plain',
        },
      ])
      const res = await source({
        method: 'POST',
        url: '/evidence',
        payload: body,
        headers: { 'content-type': contentType },
      })
      expect(res.statusCode, res.body).toBe(201)
      evidence.push(res.json().id)
    }
    // In batches: a tenant's writes that arrive together commit together, which keeps the setup short.
    const seedUseCase = async (i: number) => {
      const uc = await ok(source, '/use_cases', {
        name: `Use case ${String(i).padStart(4, '0')}`,
        description: `Case ${i}`,
        risk_category_level: ['high', 'medium', 'low'][i % 3],
        owner: { owner_id: i % 2 ? ada.id : team.id },
        custom_fields: [{ custom_field_id: costCentre, value: `CC-${i % 7}` }],
        questionnaire_ids: ['AI-USE-CASE-INTAKE+1'],
        questions: [
          { questionnaire_id: 'AI-USE-CASE-INTAKE+1', question_id: 'business_purpose', value: `Purpose ${i}` },
          { questionnaire_id: 'AI-USE-CASE-INTAKE+1', question_id: 'personal_data', value: i % 2 === 0 },
        ],
      })
      if (i % 10 === 0) {
        await ok(source, `/use_cases/${uc.id}/models`, { id: model.id })
        const pack = await ok(source, `/use_cases/${uc.id}/policy_packs`, { key: 'NIST-AI-RMF' })
        expect(pack).toBeTruthy()
        const controls = (await source({ method: 'GET', url: `/use_cases/${uc.id}/controls` })).json().items
        const patched = await source({
          method: 'PATCH',
          url: `/use_cases/${uc.id}/controls/${controls[0].id}`,
          payload: { status: 'implemented', notes: `done ${i}` },
        })
        expect(patched.statusCode, patched.body).toBe(200)
        const link = await source({
          method: 'POST',
          url: `/use_cases/${uc.id}/controls/${controls[0].id}/evidence`,
          payload: { evidence_id: evidence[(i / 10) % FILES], requirement: 0 },
        })
        expect(link.statusCode, link.body).toBeLessThan(300)
      }
    }
    for (let i = 0; i < USE_CASES; i += 25)
      await Promise.all(Array.from({ length: Math.min(25, USE_CASES - i) }, (_, j) => seedUseCase(i + j)))
    const res = await source({ method: 'GET', url: '/configuration?include=records' })
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200)
    expect(res.headers['content-type']).toContain('application/x-tar')
    bundle = res.rawPayload
  }, 240_000)
  afterAll(async () => t?.close())

  it('exports the document, the records and the files, and copies them into an empty tenant record by record', async () => {
    const exported = await entries(bundle)
    expect(exported.has('configuration.yaml')).toBe(true)
    const want = recordsOf(exported)
    expect([...want.records.keys()].filter((k) => k.startsWith('use_cases ')).length).toBe(USE_CASES)
    expect(want.hashes.length).toBe(FILES)

    const target = t.as('dst', 'admin')
    const plan = await target({ method: 'POST', url: '/configuration/plan', payload: bundle, headers: tarType })
    expect(plan.statusCode, plan.body.slice(0, 2000)).toBe(200)
    expect(plan.json().records.summary).toMatchObject({
      create: want.records.size,
      update: 0,
      unchanged: 0,
      files: FILES,
    })
    const applied = await target({
      method: 'POST',
      url: `/configuration/apply?plan_id=${plan.json().plan_id}`,
      payload: bundle,
      headers: tarType,
    })
    expect(applied.statusCode, applied.body.slice(0, 2000)).toBe(200)

    const copy = await target({ method: 'GET', url: '/configuration?include=records' })
    const got = recordsOf(await entries(copy.rawPayload))
    expect(got.records.size).toBe(want.records.size)
    for (const [key, record] of want.records) expect(got.records.get(key), key).toEqual(record)
    expect(got.hashes.sort()).toEqual(want.hashes.sort())
    const again = await target({ method: 'POST', url: '/configuration/plan', payload: bundle, headers: tarType })
    expect(again.json().records.summary).toMatchObject({ create: 0, update: 0, unchanged: want.records.size })
  }, 240_000)

  it('refuses bad bundles with 422 naming the problem, and applies nothing, keeping no stored file', async () => {
    const target = t.as('bad', 'admin')
    // Each bundle would create a risk type, a vendor and evidence with its file, were it not refused.
    const doc = 'apiVersion: aigov/v1\nrisk_types: [{ name: Never }]\n'
    const data = Buffer.from('evidence bytes')
    const [filePath] = fileEntry(data)
    const sha = filePath.slice('files/'.length)
    const vendor = (name: string, owner: object | null = null) =>
      `${JSON.stringify({ name, description: null, website: null, status: 'active', owner, custom_fields: {} })}\n`
    const evidence = `${JSON.stringify({
      key: `${sha} Report`,
      kind: 'file',
      title: 'Report',
      url: null,
      file_name: 'r.txt',
      content_type: 'text/plain',
      size: data.length,
      sha256: sha,
    })}\n`
    const good: [string, Buffer | string][] = [
      ['configuration.yaml', doc],
      ['records/vendors/000001.ndjson', vendor('Never Vendor')],
      fileEntry(data),
      ['records/evidence/000001.ndjson', evidence],
    ]
    const cases: [string, Buffer, RegExp, string[]?][] = [
      ['dot-dot', await archive([...good, ['../etc/passwd', 'x']]), /outside the archive/],
      ['dot-dot inside', await archive([...good, ['records/../../x', 'x']]), /outside the archive/],
      ['absolute', await archive([...good, ['/etc/passwd', 'x']]), /absolute/],
      ['sha', await archive([...good, [`files/${'0'.repeat(64)}`, data]]), /sha256/],
      [
        'files',
        await archive([...good, ...Array.from({ length: 30 }, (_, i) => fileEntry(Buffer.from(`f${i}`)))]),
        /CONFIGURATION_BUNDLE_MAX_FILES/,
      ],
      [
        'line',
        await archive([...good, ['records/vendors/000002.ndjson', `${vendor('V')}{"name": 3}\n`]]),
        /records\/vendors\/000002\.ndjson:2/,
      ],
      ['symlink', await archive([...good, ['files/x', '', { type: 'symlink', linkname: '/etc' }]]), /plain files/],
      [
        'hard link',
        await archive([...good, ['records/x', '', { type: 'link', linkname: 'configuration.yaml' }]]),
        /plain files/,
      ],
      [
        'unknown owner (named by the plan; the apply stores the file first, then refuses and removes it)',
        await archive([...good, ['records/vendors/000002.ndjson', vendor('Owned', { email: 'nobody@example.com' })]]),
        /records\/vendors\/000002\.ndjson:1 \/owner.*nobody@example\.com/,
      ],
      ['not tar', Buffer.from('hello, this is not a tar archive at all'.repeat(20)), /tar|bundle/],
      ['no document', await archive(good.slice(1)), /configuration\.yaml/],
    ]
    await target({ method: 'GET', url: '/risk_types' })
    const before = await tenantCounts(t.deps.database, 'bad')
    for (const [what, body, message, urls = ['/configuration/plan', '/configuration/apply']] of cases) {
      for (const url of urls) {
        const res = await target({ method: 'POST', url, payload: body, headers: tarType })
        expect(res.statusCode, `${what} ${url}: ${res.body}`).toBe(422)
        expect(res.headers['content-type']).toContain('application/problem+json')
        expect(JSON.stringify(res.json()), what).toMatch(message)
      }
      expect(await tenantCounts(t.deps.database, 'bad'), what).toEqual(before)
    }
    // The same bundle without the fault applies: the cases above were refused for their fault alone.
    const applied = await target({
      method: 'POST',
      url: '/configuration/apply',
      payload: await archive(good),
      headers: tarType,
    })
    expect(applied.statusCode, applied.body).toBe(200)
    expect((await tenantCounts(t.deps.database, 'bad')).vendors).toBe(before.vendors + 1)

    const reader = t.as('bad', 'read')
    const refused = await reader({ method: 'POST', url: '/configuration/apply', payload: bundle, headers: tarType })
    expect(refused.statusCode).toBe(403)
  }, 120_000)

  it('refuses a bundle over CONFIGURATION_BUNDLE_MAX_MB with 413, and applies nothing', async () => {
    const small = await startTestApp(dialect, { CONFIGURATION_BUNDLE_MAX_MB: '1' })
    try {
      const target = small.as('big', 'admin')
      await target({ method: 'GET', url: '/risk_types' })
      const before = await tenantCounts(small.deps.database, 'big')
      const body = await archive([
        ['configuration.yaml', 'apiVersion: aigov/v1\nrisk_types: [{ name: Never }]\n'],
        fileEntry(Buffer.alloc(1024 * 1024 + 1, 7)),
      ])
      for (const url of ['/configuration/plan', '/configuration/apply']) {
        const res = await target({ method: 'POST', url, payload: body, headers: tarType })
        expect(res.statusCode, res.body).toBe(413)
        expect(res.json()).toMatchObject({ code: 'payload_too_large' })
        expect(res.json().detail).toMatch(/CONFIGURATION_BUNDLE_MAX_MB/)
      }
      expect(await tenantCounts(small.deps.database, 'big')).toEqual(before)
    } finally {
      await small.close()
    }
  }, 60_000)
})
