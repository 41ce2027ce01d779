import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { auditActions, insertRiskType, publishNextVersion } from '../../helpers/policy.js'

describeEachDialect('policy control bases: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/policy_control_bases',
    resourceType: 'policy_control_base',
    idPrefix: 'pcb',
    validBody: (i) => ({ key: `CTRL-${i}`, name: `Control ${i}` }),
    updateBody: { deprecated: true },
    deletable: false,
  })
})

describeEachDialect('policy control versions: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/policy_control_versions',
    resourceType: 'policy_control_version',
    idPrefix: 'pcv',
    validBody: (i) => ({ key: 'CONTRACT', description: `draft ${i}` }),
    updateBody: { description: 'changed' },
    deletable: false,
    prepare: async (t, tenant) => {
      const res = await t.as(
        tenant,
        'write',
      )({ method: 'POST', url: '/policy_control_bases', payload: { key: 'CONTRACT', name: 'Contract control' } })
      if (res.statusCode !== 201) throw new Error(res.body)
    },
  })
})

describeEachDialect('policy controls', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('rejects a duplicate key with 422 already_exists naming the key and the existing base', async () => {
    const write = t.as('acme', 'write')
    const first = await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'DUP', name: 'One' } })
    expect(first.statusCode).toBe(201)
    const dup = await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'DUP', name: 'Two' } })
    expect(dup.statusCode).toBe(422)
    expect(dup.json()).toMatchObject({
      code: 'already_exists',
      existing_id: first.json().id,
      errors: [{ field: 'key' }],
    })
    // Another tenant may use the same key.
    expect(
      (
        await t.as(
          'globex',
          'write',
        )({ method: 'POST', url: '/policy_control_bases', payload: { key: 'DUP', name: 'One' } })
      ).statusCode,
    ).toBe(201)
  })

  it('numbers versions per base, edits drafts, and freezes published versions (409)', async () => {
    const write = t.as('acme', 'write')
    const base = (
      await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'IMM', name: 'Immutable' } })
    ).json()
    expect(base.latest_version).toBeNull()
    const v1 = (
      await write({
        method: 'POST',
        url: '/policy_control_versions',
        payload: { base_id: base.id, evidence_requirements: [{ type: 'file', description: 'Procedure' }] },
      })
    ).json()
    const v2 = (
      await write({ method: 'POST', url: '/policy_control_versions', payload: { key: 'IMM', name: 'Immutable, v2' } })
    ).json()
    expect([v1.version, v2.version]).toEqual([1, 2])
    expect(v1).toMatchObject({
      status: 'draft',
      name: 'Immutable',
      key: 'IMM',
      published_at: null,
      evidence_requirements: [{ type: 'file', description: 'Procedure', required: true }],
    })

    const edited = await write({
      method: 'PATCH',
      url: `/policy_control_versions/${v1.id}`,
      payload: { description: 'Edited while draft' },
    })
    expect(edited.statusCode).toBe(200)
    expect(edited.json().description).toBe('Edited while draft')

    const published = await write({ method: 'POST', url: `/policy_control_versions/${v1.id}/publish` })
    expect(published.statusCode).toBe(200)
    expect(published.json().status).toBe('published')
    expect(published.json().published_at).toEqual(expect.any(String))

    expect(
      (await write({ method: 'PATCH', url: `/policy_control_versions/${v1.id}`, payload: { description: 'too late' } }))
        .statusCode,
    ).toBe(409)
    expect((await write({ method: 'PATCH', url: `/policy_control_versions/${v1.id}`, payload: {} })).statusCode).toBe(
      409,
    )
    expect((await write({ method: 'POST', url: `/policy_control_versions/${v1.id}/publish` })).statusCode).toBe(409)
    const after = (await write({ method: 'GET', url: `/policy_control_versions/${v1.id}` })).json()
    expect(after.description).toBe('Edited while draft')

    expect((await write({ method: 'GET', url: `/policy_control_bases/${base.id}` })).json().latest_version).toBe(1)
    await write({ method: 'POST', url: `/policy_control_versions/${v2.id}/publish` })
    expect((await write({ method: 'GET', url: `/policy_control_bases/${base.id}` })).json().latest_version).toBe(2)

    expect(await auditActions(t, 'acme', `resource_id=${v1.id}`)).toEqual([
      'policy_control_version.created',
      'policy_control_version.updated',
      'policy_control_version.published',
    ])
  })

  it('filters versions by base_id, key and status', async () => {
    const write = t.as('acme', 'write')
    const base = (
      await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'FILTER', name: 'Filter' } })
    ).json()
    await publishNextVersion(t, 'acme', 'FILTER')
    await write({ method: 'POST', url: '/policy_control_versions', payload: { key: 'FILTER' } })
    const read = t.as('acme', 'read')
    const byBase = (await read({ method: 'GET', url: `/policy_control_versions?base_id=${base.id}` })).json().items
    expect(byBase.map((v: { version: number }) => v.version)).toEqual([1, 2])
    const drafts = (await read({ method: 'GET', url: '/policy_control_versions?key=FILTER&status=draft' })).json().items
    expect(drafts.map((v: { version: number }) => v.version)).toEqual([2])
    expect((await read({ method: 'GET', url: '/policy_control_versions?status=bogus' })).statusCode).toBe(400)
  })

  it('checks risk_type_ids exist in the tenant (422 naming the id)', async () => {
    const rt = await insertRiskType(t, 'acme', 'Bias')
    const foreign = await insertRiskType(t, 'globex', 'Bias')
    const write = t.as('acme', 'write')
    await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'RISKY', name: 'Risky' } })
    const bad = await write({
      method: 'POST',
      url: '/policy_control_versions',
      payload: { key: 'RISKY', risk_type_ids: [rt, foreign] },
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().detail).toContain(foreign)
    expect(bad.json().errors).toEqual([{ field: 'risk_type_ids/1', message: `risk type ${foreign} does not exist` }])
    const ok = await write({
      method: 'POST',
      url: '/policy_control_versions',
      payload: { key: 'RISKY', risk_type_ids: [rt] },
    })
    expect(ok.statusCode).toBe(201)
    expect(
      (await write({ method: 'POST', url: '/policy_control_versions', payload: { key: 'NOPE' } })).statusCode,
    ).toBe(422)
    expect((await write({ method: 'POST', url: '/policy_control_versions', payload: {} })).statusCode).toBe(422)
  })

  describe('published controls', () => {
    it('lists the latest published version of each non-archived base, with filters', async () => {
      await t.apiKey('pub')
      const rt = await insertRiskType(t, 'pub', 'Privacy')
      const write = t.as('pub', 'write')
      const a = (
        await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'A', name: 'Data minimisation' } })
      ).json()
      await publishNextVersion(t, 'pub', 'A', { risk_type_ids: [rt] })
      const a2 = await publishNextVersion(t, 'pub', 'A', { name: 'Data minimisation v2', risk_type_ids: [rt] })
      await write({ method: 'POST', url: '/policy_control_versions', payload: { key: 'A', name: 'draft v3' } })
      await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'B', name: 'Logging' } })
      await publishNextVersion(t, 'pub', 'B')
      await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'C', name: 'Never published' } })
      const d = (
        await write({ method: 'POST', url: '/policy_control_bases', payload: { key: 'D', name: 'Archived' } })
      ).json()
      await publishNextVersion(t, 'pub', 'D')
      await write({ method: 'PATCH', url: `/policy_control_bases/${d.id}`, payload: { archived: true } })

      const read = t.as('pub', 'read')
      const all = (await read({ method: 'GET', url: '/policy_controls' })).json().items
      expect(all.map((c: { key: string; version: number }) => `${c.key}@${c.version}`)).toEqual(['A@2', 'B@1'])
      expect(all[0]).toMatchObject({
        id: a.id,
        version_id: a2,
        name: 'Data minimisation v2',
        risk_type_ids: [rt],
        deprecated: false,
      })
      const byRisk = (await read({ method: 'GET', url: `/policy_controls?risk_type_id=${rt}` })).json().items
      expect(byRisk.map((c: { key: string }) => c.key)).toEqual(['A'])
      const byQ = (await read({ method: 'GET', url: '/policy_controls?q=LOGG' })).json().items
      expect(byQ.map((c: { key: string }) => c.key)).toEqual(['B'])
      const byKey = (await read({ method: 'GET', url: '/policy_controls?key=A&sort=-name' })).json().items
      expect(byKey).toHaveLength(1)
      expect((await read({ method: 'GET', url: `/policy_controls/${a.id}` })).json().version).toBe(2)
      expect((await read({ method: 'GET', url: `/policy_controls/${d.id}` })).statusCode).toBe(404)
      expect((await t.as('acme', 'read')({ method: 'GET', url: `/policy_controls/${a.id}` })).statusCode).toBe(404)
      // Read-only: no writes on the flattened view.
      expect((await write({ method: 'POST', url: '/policy_controls', payload: {} })).statusCode).toBe(405)
    })

    it('pages through controls sorted by name without repeats', async () => {
      await t.apiKey('pages')
      for (const key of ['P1', 'P2', 'P3', 'P4', 'P5']) {
        await t.as(
          'pages',
          'write',
        )({ method: 'POST', url: '/policy_control_bases', payload: { key, name: `Zeta ${6 - Number(key[1])}` } })
        await publishNextVersion(t, 'pages', key)
      }
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: { items: { key: string }[]; pagination: { next_cursor: string | null } } = (
          await t.as(
            'pages',
            'read',
          )({ method: 'GET', url: `/policy_controls?sort=name&page_limit=2${cursor ? `&page_after=${cursor}` : ''}` })
        ).json()
        seen.push(...page.items.map((c: { key: string }) => c.key))
        cursor = page.pagination.next_cursor
      } while (cursor)
      expect(seen).toEqual(['P5', 'P4', 'P3', 'P2', 'P1'])
    })
  })
})
