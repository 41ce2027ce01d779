import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

type Call = ReturnType<TestApp['as']>

describeEachDialect('configuration as code', (dialect) => {
  let t: TestApp
  let admin: Call
  const yaml = { 'content-type': 'application/yaml' }

  const auditCount = async (call: Call) => {
    let n = 0
    let after: string | null = null
    do {
      const res = await call({ method: 'GET', url: `/audit_logs?page_limit=100${after ? `&page_after=${after}` : ''}` })
      n += res.json().items.length
      after = res.json().pagination.next_cursor
    } while (after)
    return n
  }
  const exported = async (call: Call, accept = 'application/json') =>
    (await call({ method: 'GET', url: '/configuration', headers: { accept } })).body

  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_STARTER_LIBRARY: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    admin = t.as('acme', 'admin')
    const ok = async (url: string, payload: object) => {
      const res = await admin({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBeLessThan(300)
      return res.json()
    }
    // A realistic tenant: the starter library, plus custom fields, stages, users, teams and a webhook endpoint.
    await ok('/workflow_stages', { name: 'Legal review', assessment_required: false })
    await ok('/workflow_stages', { name: 'Security review', description: 'Pen test and threat model' })
    await ok('/custom_fields', { name: 'Cost centre', type: 'string', entity_types: ['use_case'] })
    await ok('/custom_fields', { name: 'Tier', type: 'string', element_type: 'select', options: ['gold', 'silver'] })
    const ada = await ok('/users', { email: 'Ada@example.com', name: 'Ada Lovelace', title: 'Head of model risk' })
    const alan = await ok('/users', { email: 'alan@example.com', name: 'Alan Turing', active: false })
    const team = await ok('/teams', { name: 'Model risk', description: 'Second line' })
    await ok(`/teams/${team.id}/members`, { user_id: ada.id })
    await ok(`/teams/${team.id}/members`, { user_id: alan.id })
    await ok('/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['use_case.*'], description: 'Jira' })
  })
  afterAll(async () => t?.close())

  it('exports a canonical document, in JSON or YAML, with a published schema', async () => {
    const json = await exported(admin)
    expect(await exported(admin)).toBe(json)
    const doc = JSON.parse(json)
    expect(doc.apiVersion).toBe('aigov/v1')
    expect(doc.workflow_stages.map((s: { name: string }) => s.name)).toEqual(['Legal review', 'Security review'])
    expect(doc.teams).toEqual([
      { name: 'Model risk', description: 'Second line', members: ['ada@example.com', 'alan@example.com'] },
    ])
    expect(doc.webhook_endpoints[0]).toEqual({
      url: 'http://127.0.0.1:9/hooks',
      description: 'Jira',
      events: ['use_case.*'],
      enabled: true,
    })
    expect(json).not.toMatch(/whsec_|created_at|"(usr|team|rt|rs|ws|cf|pcb|pcv|pp|q)_/)
    expect(doc.policy_controls.length).toBeGreaterThan(0)
    const text = await exported(admin, 'application/yaml')
    expect(parse(text)).toEqual(doc)
    const schema = await admin({ method: 'GET', url: '/configuration/schema' })
    expect(schema.statusCode).toBe(200)
    expect(schema.json().properties.apiVersion).toBeDefined()
    // Read keys may export.
    expect((await t.as('acme', 'read')({ method: 'GET', url: '/configuration' })).statusCode).toBe(200)
  })

  it('round trip: an export applied to an empty tenant exports the same bytes; to its own tenant changes nothing', async () => {
    const json = await exported(admin)
    const text = await exported(admin, 'application/yaml')
    const before = await auditCount(admin)
    const own = await admin({ method: 'POST', url: '/configuration/apply', headers: yaml, payload: text })
    expect(own.statusCode, own.body).toBe(200)
    expect(own.json().applied).toBe(0)
    expect(own.json().summary.create + own.json().summary.update + own.json().summary.delete).toBe(0)
    expect(await auditCount(admin)).toBe(before)

    const other = t.as('copy', 'admin')
    const applied = await other({ method: 'POST', url: '/configuration/apply', headers: yaml, payload: text })
    expect(applied.statusCode, applied.body).toBe(200)
    expect(applied.json().applied).toBeGreaterThan(5)
    expect(await exported(other)).toBe(json)
    expect(await exported(other, 'application/yaml')).toBe(text)
    const summary = (await other({ method: 'GET', url: '/audit_logs?action=configuration.applied' })).json().items
    expect(summary).toHaveLength(1)
    expect(summary[0].metadata.records).toBeGreaterThan(5)
  })

  it('plans every kind of change, a new version for a changed published one, and pins the state', async () => {
    const doc = JSON.parse(await exported(admin))
    doc.risk_types.push({ name: 'Brand new risk' })
    doc.custom_fields[0].description = 'Finance cost centre'
    doc.users = doc.users.filter((u: { email: string }) => u.email !== 'alan@example.com')
    doc.teams[0].members = ['ada@example.com']
    doc.workflow_stages.reverse()
    const control = doc.policy_controls[0]
    const last = control.versions[control.versions.length - 1]
    const wording = last.description
    last.description = 'Stricter wording'
    const plan = await admin({ method: 'POST', url: '/configuration/plan?prune=true', payload: doc })
    expect(plan.statusCode, plan.body).toBe(200)
    const changes = plan.json().changes as {
      section: string
      key: string
      action: string
      changes?: Record<string, { before?: unknown; after?: unknown }>
      note?: string
    }[]
    const find = (section: string, key: string) => changes.find((c) => c.section === section && c.key === key)
    expect(find('risk_types', 'Brand new risk')?.action).toBe('create')
    expect(find('custom_fields', 'Cost centre')).toMatchObject({
      action: 'update',
      changes: { description: { before: null, after: 'Finance cost centre' } },
    })
    expect(find('users', 'alan@example.com')?.action).toBe('delete')
    expect(find('users', 'Ada@example.com')?.action).toBe('unchanged')
    expect(find('teams', 'Model risk')?.changes?.members).toEqual({
      before: ['ada@example.com', 'alan@example.com'],
      after: ['ada@example.com'],
    })
    expect(find('workflow_stages', 'Security review')?.changes?.position).toEqual({ before: 2, after: 1 })
    const newVersion = changes.find(
      (c) => c.section === 'policy_controls' && c.key === `${control.key}+${last.version + 1}`,
    )
    expect(newVersion).toMatchObject({
      action: 'create',
      document_version: last.version,
      changes: { description: { before: wording, after: 'Stricter wording' } },
    })
    expect(newVersion?.note).toContain('never edited')
    expect(plan.json().summary.unchanged).toBeGreaterThan(0)
    // Without prune nothing is deleted.
    const kept = await admin({ method: 'POST', url: '/configuration/plan', payload: doc })
    expect(kept.json().changes.some((c: { action: string }) => c.action === 'delete')).toBe(false)

    // The tenant changes after the plan: its plan_id is refused, and nothing is applied.
    await admin({ method: 'POST', url: '/risk_types', payload: { name: 'Changed meanwhile' } })
    const before = await auditCount(admin)
    const stale = await admin({
      method: 'POST',
      url: `/configuration/apply?prune=true&plan_id=${plan.json().plan_id}`,
      payload: doc,
    })
    expect(stale.statusCode).toBe(409)
    expect(await auditCount(admin)).toBe(before)

    const fresh = await admin({ method: 'POST', url: '/configuration/plan?prune=true', payload: doc })
    const applied = await admin({
      method: 'POST',
      url: `/configuration/apply?prune=true&plan_id=${fresh.json().plan_id}`,
      payload: doc,
    })
    expect(applied.statusCode, applied.body).toBe(200)
    const after = JSON.parse(await exported(admin))
    expect(after.users.map((u: { email: string }) => u.email)).toEqual(['Ada@example.com'])
    expect(after.workflow_stages.map((s: { name: string }) => s.name)).toEqual(['Security review', 'Legal review'])
    expect(after.risk_types.some((r: { name: string }) => r.name === 'Changed meanwhile')).toBe(false)
    const versions = after.policy_controls.find((c: { key: string }) => c.key === control.key).versions
    expect(versions[versions.length - 1]).toMatchObject({ version: last.version + 1, description: 'Stricter wording' })
    expect(versions[versions.length - 2]).toMatchObject({ version: last.version, description: wording })
    // Applying the same document again changes nothing.
    const again = await admin({ method: 'POST', url: '/configuration/apply?prune=true', payload: doc })
    expect(again.json().applied).toBe(0)
  })

  it('applies nothing when one change fails', async () => {
    const doc = JSON.parse(await exported(admin))
    const ada = (await admin({ method: 'GET', url: '/users?email=ada@example.com' })).json().items[0]
    await admin({
      method: 'POST',
      url: '/use_cases',
      payload: { name: 'Owned', owner: { owner_id: ada.id, owner_type: 'user' } },
    })
    doc.risk_types.push({ name: 'Never created' })
    doc.users = []
    doc.teams = []
    const before = await auditCount(admin)
    const res = await admin({ method: 'POST', url: '/configuration/apply?prune=true', payload: doc })
    expect(res.statusCode).toBe(409)
    expect(await auditCount(admin)).toBe(before)
    expect(JSON.parse(await exported(admin)).risk_types.some((r: { name: string }) => r.name === 'Never created')).toBe(
      false,
    )
  })

  describe('bad input', () => {
    const plan = (payload: string | object, headers: Record<string, string> = {}) =>
      admin({ method: 'POST', url: '/configuration/plan', payload, headers })

    it('names each schema error by JSON pointer, and in YAML its line and column', async () => {
      const res = await plan('apiVersion: aigov/v1\nrisk_types:\n  - name: Fine\n  - nmae: Typo\n', yaml)
      expect(res.statusCode).toBe(422)
      const errors = res.json().errors
      expect(errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ pointer: '/risk_types/1/nmae', message: 'unknown field', line: 4 }),
          expect.objectContaining({ pointer: '/risk_types/1/name', message: 'is required', line: 4, column: 5 }),
        ]),
      )
      const json = await plan({ apiVersion: 'aigov/v1', custom_fields: [{ name: 'x', type: 'colour' }] })
      expect(json.statusCode).toBe(422)
      expect(json.json().errors[0].pointer).toBe('/custom_fields/0/type')
    })

    it('refuses YAML syntax errors with their place, unknown apiVersion, duplicates, cycles and dangling references', async () => {
      const syntax = await plan('apiVersion: aigov/v1\nrisk_types: [\n', yaml)
      expect(syntax.statusCode).toBe(422)
      expect(syntax.json().errors[0].line).toBeGreaterThan(0)

      const version = await plan({ apiVersion: 'aigov/v9' })
      expect(version.statusCode).toBe(422)
      expect(version.json().detail).toContain('aigov/v9')
      expect(version.json().errors[0].pointer).toBe('/apiVersion')

      const dup = await plan('apiVersion: aigov/v1\nrisk_types:\n  - name: Bias\n  - name: " BIAS"\n', yaml)
      expect(dup.statusCode).toBe(422)
      expect(dup.json().errors[0]).toMatchObject({ pointer: '/risk_types/1/name', line: 4 })

      const cycle = await plan('apiVersion: aigov/v1\nrisk_types: &a\n  - name: x\n    description: *a\n', yaml)
      expect(cycle.statusCode).toBe(422)
      expect(cycle.json().detail).toContain('cycle')

      const dangling = await plan({
        apiVersion: 'aigov/v1',
        risk_scenarios: [{ name: 'S', risk_types: ['Nowhere'] }],
        teams: [{ name: 'T', members: ['ghost@example.com'] }],
        policy_packs: [{ key: 'P', versions: [{ version: 1, name: 'P', controls: [{ key: 'NOPE', version: 1 }] }] }],
      })
      expect(dangling.statusCode).toBe(422)
      expect(
        dangling
          .json()
          .errors.map((e: { pointer: string }) => e.pointer)
          .sort(),
      ).toEqual(['/policy_packs/0/versions/0/controls/0', '/risk_scenarios/0/risk_types/0', '/teams/0/members/0'])
    })

    it('refuses a document over the size limit (413), and apply for keys below admin (403)', async () => {
      const big = `apiVersion: aigov/v1\nrisk_types:\n${'  - name: x\n    description: '.concat('y'.repeat(200), '\n').repeat(6000)}`
      expect((await plan(big, yaml)).statusCode).toBe(413)
      const write = t.as('acme', 'write')
      const res = await write({ method: 'POST', url: '/configuration/apply', payload: { apiVersion: 'aigov/v1' } })
      expect(res.statusCode).toBe(403)
    })
  })
})
