import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

describeEachDialect('long names and descriptions', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  // A ticket key prefixed to a 255-character summary, padded to the 512-character limit, with non-ASCII text.
  const longName = `JIRA-48213 ${'Résumé screening for the retail credit intake '.repeat(11)}`.slice(0, 512)
  // 100 000 characters: ASCII, accented letters and line breaks.
  const longDescription = 'Détails du modèle, ligne par ligne.\n'.repeat(2778).slice(0, 100_000)

  it('accepts a 512-character name and a 100 000-character description, round-trips both, and exports them', async () => {
    expect(longName).toHaveLength(512)
    expect(longDescription).toHaveLength(100_000)
    const write = t.as('acme', 'write')
    const res = await write({
      method: 'POST',
      url: '/use_cases',
      payload: { name: longName, description: longDescription },
    })
    expect(res.statusCode, res.body).toBe(201)
    const id = res.json().id
    const read = (await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).json()
    expect(read.name).toBe(longName)
    expect(read.description).toBe(longDescription)

    const ndjson = await t.as(
      'acme',
      'read',
    )({ method: 'GET', url: `/audit_logs/export?format=ndjson&resource_id=${id}` })
    const [created] = ndjson.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(created).toMatchObject({ action: 'use_case.created', resource_name: longName })
    expect(created.changes.description).toEqual([null, longDescription])
    const csv = await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs/export?format=csv&resource_id=${id}` })
    expect(csv.body).toContain(longName)
    // The changes column is JSON inside a CSV field: its line breaks are escaped once by JSON.
    expect(csv.body).toContain(JSON.stringify(longDescription).slice(1, -1).replaceAll('"', '""'))
  })

  it('accepts long names and descriptions in every named family, and renames to 512 characters', async () => {
    const write = t.as('acme', 'write')
    const bodies: [string, Record<string, unknown>][] = [
      ['/models', { name: longName, summary: longDescription }],
      ['/vendors', { name: longName, description: longDescription }],
      ['/risk_types', { name: longName, description: longDescription }],
      ['/risk_scenarios', { name: longName, description: longDescription }],
      ['/workflow_stages', { name: longName, description: longDescription }],
      ['/policy_control_bases', { key: 'LONG', name: longName }],
    ]
    for (const [url, payload] of bodies) {
      const res = await write({ method: 'POST', url, payload })
      expect(res.statusCode, `${url} ${res.body.slice(0, 300)}`).toBe(201)
      expect(res.json().name).toBe(longName)
    }
    const uc = (await write({ method: 'POST', url: '/use_cases', payload: { name: 'short' } })).json()
    const renamed = await write({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: { name: `${longName.slice(0, 511)}!` },
    })
    expect(renamed.statusCode, renamed.body.slice(0, 300)).toBe(200)
  })

  it('refuses a 513-character name and a 100 001-character description with 422 naming the field', async () => {
    const write = t.as('limits', 'write')
    const name = await write({ method: 'POST', url: '/use_cases', payload: { name: 'n'.repeat(513) } })
    expect(name.statusCode).toBe(422)
    expect(name.json().errors).toEqual([{ field: 'name', message: expect.stringContaining('512') }])
    const description = await write({
      method: 'POST',
      url: '/vendors',
      payload: { name: 'ok', description: 'd'.repeat(100_001) },
    })
    expect(description.statusCode).toBe(422)
    expect(description.json().errors).toEqual([{ field: 'description', message: expect.stringContaining('100000') }])
    for (const url of ['/use_cases', '/vendors'])
      expect((await t.as('limits', 'read')({ method: 'GET', url })).json().items).toEqual([])
  })
})
