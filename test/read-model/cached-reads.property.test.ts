import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { INTAKE_SECTIONS } from '../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// Random writes of every family, made through either of two instances on one database, interleaved with reads:
// every answer of the instance with its caches on equals the answer of the one with them off, read right after it.
// Writes that the service refuses (a 409, a 422) are part of the mix; an answer of 500 or more fails the run.

// A few runs in the suite; PROPERTY_RUNS=50 (say) searches further.
const RUNS = Number(process.env.PROPERTY_RUNS ?? 3)
const WORDS = ['alpha', 'bravo', 'credit', 'delta', 'echo', 'fraud']

type Family = 'use_cases' | 'models' | 'vendors'
const FAMILIES: Family[] = ['use_cases', 'models', 'vendors']

interface World {
  tenant: string
  records: Record<Family, string[]>
  users: string[]
  teams: string[]
  fields: { id: string; type: 'select' | 'number' | 'boolean' }[]
  stages: string[]
  scenarios: string[]
  /** The last pages read: each is read again after every write, while the caches may still hold it. */
  watched: string[]
}

/** Where a step's numbers point: the pick-th of what exists (or nothing when nothing does). */
const pick = <T>(list: T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length])

const word = fc.constantFrom(...WORDS)
const text = fc.tuple(word, word).map(([a, b]) => `${a} ${b}`)
const n = fc.nat(1000)

const writeStep = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      family: fc.constantFrom(...FAMILIES),
      name: text,
      owner: n,
      field: n,
      value: n,
      level: n,
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('patch' as const),
      family: fc.constantFrom(...FAMILIES),
      at: n,
      // One or two fields a PATCH, so that a change of only what lists ignore, or of only what they read, is common.
      fields: fc.uniqueArray(fc.constantFrom('name', 'description', 'owner', 'field', 'level'), {
        minLength: 1,
        maxLength: 2,
      }),
      name: text,
      description: text,
      owner: n,
      field: n,
      value: n,
      level: n,
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('delete' as const), family: fc.constantFrom(...FAMILIES), at: n }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('link' as const),
      which: fc.constantFrom('uc-model', 'uc-vendor', 'model-vendor', 'uc-scenario'),
      a: n,
      b: n,
      unlink: fc.boolean(),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      at: n,
      action: fc.constantFrom('create', 'rename', 'options', 'delete'),
      name: text,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('person' as const),
      at: n,
      action: fc.constantFrom('rename-user', 'rename-team', 'join-team', 'create-user'),
      name: text,
      other: n,
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('scenario' as const), at: n, name: text }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('questionnaire' as const),
      family: fc.constantFrom(...FAMILIES),
      at: n,
      action: fc.constantFrom('attach', 'answer', 'detach'),
      value: n,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('workflow' as const), at: n, stage: n, advance: fc.boolean() }),
    weight: 2,
  },
)
type WriteStep = typeof writeStep extends fc.Arbitrary<infer S> ? S : never

const step = fc.oneof(
  { arbitrary: writeStep, weight: 26 },
  // Writes sent at once, so that they commit as one group (kept reads, savepoints, one audit append).
  {
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      steps: fc.array(writeStep, { minLength: 2, maxLength: 4 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('list' as const),
      family: fc.constantFrom(...FAMILIES),
      filter: fc.constantFrom('none', 'q', 'owner', 'field', 'level', 'stage'),
      sort: fc.constantFrom(undefined, 'name', '-name', 'created_at', '-updated_at'),
      limit: fc.integer({ min: 1, max: 4 }),
      at: n,
      q: word,
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('get' as const),
      family: fc.constantFrom(...FAMILIES),
      at: n,
      part: fc.constantFrom('', '/models', '/vendors', '/risk_scenarios', '/questionnaires', '/workflow', '/dossier'),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('catalog' as const),
      path: fc.constantFrom(
        '/users',
        '/teams',
        '/custom_fields',
        '/workflow_stages',
        '/risk_scenarios',
        '/governance_summary',
      ),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('via' as const), plain: fc.boolean() }), weight: 2 },
)
const READS = new Set(['list', 'get', 'catalog', 'via'])
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never

describeEachDialect('cached reads equal uncached ones under random writes of every family', (dialect) => {
  let cached: TestApp
  let plain: TestApp
  let runs = 0
  beforeAll(async () => {
    cached = await startTestApp(dialect)
    plain = await startTestApp(dialect, {
      DATABASE_URL: cached.config.databaseUrl,
      SERVICE_READ_CACHE_MB: '0',
      SERVICE_RECORD_CACHE_MB: '0',
    })
  })
  afterAll(async () => {
    await plain?.close()
    await cached?.close()
  })

  const call = async (
    app: TestApp,
    tenant: string,
    method: string,
    url: string,
    payload?: InjectOptions['payload'],
  ) => {
    const res = await app.as(
      tenant,
      'admin',
    )({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload }) })
    if (res.statusCode >= 500) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`)
    return res
  }

  async function seed(tenant: string): Promise<World> {
    const w: World = {
      tenant,
      records: { use_cases: [], models: [], vendors: [] },
      users: [],
      teams: [],
      fields: [],
      stages: [],
      scenarios: [],
      watched: [],
    }
    const post = async (url: string, payload: InjectOptions['payload']) => {
      const res = await call(cached, tenant, 'POST', url, payload)
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201)
      return res.json()
    }
    for (const name of ['Ada', 'Grace'])
      w.users.push((await post('/users', { email: `${name.toLowerCase()}@${tenant}.example`, name })).id)
    w.teams.push((await post('/teams', { name: 'Risk office' })).id)
    w.fields.push({
      id: (
        await post('/custom_fields', {
          name: 'Tier',
          type: 'string',
          element_type: 'select',
          options: ['gold', 'silver'],
        })
      ).id,
      type: 'select',
    })
    w.fields.push({ id: (await post('/custom_fields', { name: 'Score', type: 'number' })).id, type: 'number' })
    w.fields.push({ id: (await post('/custom_fields', { name: 'Reviewed', type: 'boolean' })).id, type: 'boolean' })
    w.stages = ((await call(cached, tenant, 'GET', '/workflow_stages')).json().items as { id: string }[]).map(
      (s) => s.id,
    )
    w.stages.push((await post('/workflow_stages', { name: 'Legal review' })).id)
    const riskType = await post('/risk_types', { name: 'Bias' })
    w.scenarios.push(
      (await post('/risk_scenarios', { name: 'Scores one group lower', risk_type_ids: [riskType.id] })).id,
    )
    for (const [i, family] of [...FAMILIES, ...FAMILIES].entries())
      w.records[family].push((await post(`/${family}`, { name: `${WORDS[i]} seed`, ...levelOf(family, i) })).id)
    for (const target of ['use_case', 'model', 'vendor'])
      await post('/questionnaires', {
        key: `INTAKE-${target}`,
        name: `Intake ${target}`,
        target,
        sections: INTAKE_SECTIONS,
      })
    return w
  }

  const fieldValue = (w: World, field: number, value: number) => {
    const f = pick(w.fields, field)
    if (!f) return []
    const v =
      f.type === 'select' ? ['gold', 'silver', 'bronze'][value % 3] : f.type === 'number' ? value : value % 2 === 0
    return [{ custom_field_id: f.id, value: value % 7 === 0 ? null : v }]
  }
  const ownerOf = (w: World, o: number) => {
    const all = [...w.users, ...w.teams]
    return o % 5 === 0 ? null : { owner_id: pick(all, o)! }
  }
  const levelOf = (family: Family, l: number) =>
    family === 'use_cases'
      ? { risk_category_level: ['high', 'medium', 'low', 'none'][l % 4] }
      : {
          status:
            family === 'models'
              ? ['none', 'in_development', 'in_production', 'retired'][l % 4]
              : ['active', 'inactive'][l % 2],
        }
  const targetOf = (family: Family) => ({ use_cases: 'use_case', models: 'model', vendors: 'vendor' })[family]

  /** Lists read before and after every write of the family: kept pages that a write should have dropped show here. */
  const panel = (w: World, family: Family) => {
    const level = Object.entries(levelOf(family, 0))[0][0]
    const values = family === 'use_cases' ? ['high', 'low'] : family === 'models' ? ['in_production'] : ['active']
    return [
      `/${family}?page_limit=100`,
      `/${family}?sort=name&page_limit=2`,
      `/${family}?q=alpha`,
      ...values.map((v) => `/${family}?${level}=${v}`),
      `/${family}?owner_id=${w.users[0]}`,
      `/${family}?custom_field_id=${w.fields[0].id}&custom_field_value=gold`,
      ...(family === 'use_cases'
        ? [
            `/use_cases?workflow_stage_id=${w.stages[0]}`,
            ...['complete', 'incomplete', 'none'].map((c) => `/use_cases?questionnaire_completion=${c}`),
          ]
        : []),
    ]
  }

  /** An answer as compared: a problem's request_id names the request and a dossier's generated_at its making, not the state. */
  const seen = (url: string, res: { statusCode: number; body: string }) => ({
    url,
    status: res.statusCode,
    body: JSON.parse(res.body, (key, value) => (key === 'request_id' || key === 'generated_at' ? undefined : value)),
  })

  /** Reads url on the cached instance, then on the plain one, and the cached one again: all three the same. */
  async function same(w: World, url: string) {
    const first = await call(cached, w.tenant, 'GET', url)
    const truth = await call(plain, w.tenant, 'GET', url)
    const again = await call(cached, w.tenant, 'GET', url)
    expect(seen(url, first)).toEqual(seen(url, truth))
    expect(seen(url, again)).toEqual(seen(url, truth))
    if (first.statusCode === 200 && !w.watched.includes(url)) w.watched = [url, ...w.watched].slice(0, 4)
    return truth
  }

  async function run(w: World, s: Step, via: { app: TestApp }) {
    const write = (method: string, url: string, payload?: InjectOptions['payload']) =>
      call(via.app, w.tenant, method, url, payload)
    switch (s.kind) {
      case 'via':
        via.app = s.plain ? plain : cached
        return
      case 'burst':
        await Promise.all(s.steps.map((write: WriteStep) => run(w, write, via)))
        return
      case 'create': {
        const res = await write('POST', `/${s.family}`, {
          name: s.name,
          owner: ownerOf(w, s.owner),
          custom_fields: fieldValue(w, s.field, s.value),
          ...levelOf(s.family, s.level),
        })
        if (res.statusCode === 201) w.records[s.family].push(res.json().id)
        return
      }
      case 'patch': {
        const id = pick(w.records[s.family], s.at)
        if (!id) return
        const body: Record<string, unknown> = {}
        const has = (field: string) => s.fields.includes(field as never)
        if (has('name')) body.name = s.name
        if (has('description')) body[s.family === 'models' ? 'summary' : 'description'] = s.description
        if (has('owner')) body.owner = ownerOf(w, s.owner)
        if (has('field')) body.custom_fields = fieldValue(w, s.field, s.value)
        if (has('level')) Object.assign(body, levelOf(s.family, s.level))
        await write('PATCH', `/${s.family}/${id}`, body)
        return
      }
      case 'delete': {
        const id = pick(w.records[s.family], s.at)
        if (!id) return
        const res = await write('DELETE', `/${s.family}/${id}`)
        if (res.statusCode === 204) w.records[s.family] = w.records[s.family].filter((r) => r !== id)
        return
      }
      case 'link': {
        const [from, to, path]: [Family, Family | 'scenarios', string] =
          s.which === 'uc-model'
            ? ['use_cases', 'models', 'models']
            : s.which === 'uc-vendor'
              ? ['use_cases', 'vendors', 'vendors']
              : s.which === 'model-vendor'
                ? ['models', 'vendors', 'vendors']
                : ['use_cases', 'scenarios', 'risk_scenarios']
        const a = pick(w.records[from], s.a)
        const b = pick(to === 'scenarios' ? w.scenarios : w.records[to], s.b)
        if (!a || !b) return
        if (s.unlink) await write('DELETE', `/${from}/${a}/${path}/${b}`)
        else
          await write(
            'POST',
            `/${from}/${a}/${path}`,
            to === 'scenarios' ? { risk_scenario_id: b, likelihood: 1 + (s.a % 5) } : { id: b },
          )
        return
      }
      case 'field': {
        const f = pick(w.fields, s.at)
        if (s.action === 'create') {
          const res = await write('POST', '/custom_fields', {
            name: s.name,
            type: 'string',
            element_type: 'select',
            options: ['gold', 'silver', 'bronze'],
          })
          if (res.statusCode === 201) w.fields.push({ id: res.json().id, type: 'select' })
        } else if (f && s.action === 'rename') await write('PATCH', `/custom_fields/${f.id}`, { name: s.name })
        else if (f && s.action === 'options' && f.type === 'select')
          await write('PATCH', `/custom_fields/${f.id}`, { options: ['gold', 'silver', 'bronze', s.name] })
        else if (f && s.action === 'delete') {
          const res = await write('DELETE', `/custom_fields/${f.id}`)
          if (res.statusCode === 204) w.fields = w.fields.filter((x) => x !== f)
        }
        return
      }
      case 'person': {
        if (s.action === 'create-user') {
          const res = await write('POST', '/users', {
            email: `${s.name.replace(' ', '.')}.${s.other}@${w.tenant}.example`,
            name: s.name,
          })
          if (res.statusCode === 201) w.users.push(res.json().id)
        } else if (s.action === 'rename-user') {
          const u = pick(w.users, s.at)
          if (u) await write('PATCH', `/users/${u}`, { name: s.name })
        } else if (s.action === 'rename-team') {
          const t = pick(w.teams, s.at)
          if (t) await write('PATCH', `/teams/${t}`, { name: s.name })
        } else {
          const t = pick(w.teams, s.at)
          const u = pick(w.users, s.other)
          if (t && u) await write('POST', `/teams/${t}/members`, { user_id: u })
        }
        return
      }
      case 'scenario': {
        const id = pick(w.scenarios, s.at)
        if (id) await write('PATCH', `/risk_scenarios/${id}`, { name: s.name })
        return
      }
      case 'questionnaire': {
        const id = pick(w.records[s.family], s.at)
        if (!id) return
        const base = `/${s.family}/${id}/questionnaires`
        const key = `INTAKE-${targetOf(s.family)}`
        if (s.action === 'attach') await write('POST', base, { key })
        else if (s.action === 'detach') await write('DELETE', `${base}/${key}`)
        else
          await write('PUT', `${base}/${key}/answers`, {
            answers: [
              // Every third answer clears a required one: the questionnaire goes from complete to incomplete and back.
              { question_id: 'decision', value: s.value % 3 === 0 ? null : WORDS[s.value % WORDS.length] },
              { question_id: 'personal_data', value: s.value % 2 === 0 },
              { question_id: 'autonomy', value: ['advisory', 'autonomous'][s.value % 2] },
            ],
          })
        return
      }
      case 'workflow': {
        const id = pick(w.records.use_cases, s.at)
        if (!id) return
        if (s.advance) await write('POST', `/use_cases/${id}/workflow/advance`)
        else {
          const stage = pick(w.stages, s.stage)
          if (stage) await write('PUT', `/use_cases/${id}/workflow`, { stage_id: stage })
        }
        return
      }
      case 'list': {
        const query = new URLSearchParams({ page_limit: String(s.limit) })
        if (s.sort) query.set('sort', s.sort)
        if (s.filter === 'q') query.set('q', s.q)
        if (s.filter === 'owner') query.set('owner_id', pick([...w.users, ...w.teams], s.at)!)
        if (s.filter === 'field') {
          const f = pick(w.fields, s.at)
          if (f) {
            query.set('custom_field_id', f.id)
            if (f.type === 'select') query.set('custom_field_value', ['gold', 'silver'][s.at % 2])
          }
        }
        if (s.filter === 'level')
          for (const [key, value] of Object.entries(levelOf(s.family, s.at))) query.set(key, value)
        if (s.filter === 'stage' && s.family === 'use_cases') query.set('workflow_stage_id', pick(w.stages, s.at)!)
        // Up to three pages, following the cursors the answers give.
        for (let page = 0; page < 3; page++) {
          const body = (await same(w, `/${s.family}?${query}`)).json()
          if (!body.next_cursor) break
          query.set('page_after', body.next_cursor)
        }
        return
      }
      case 'get': {
        const id = pick(w.records[s.family], s.at)
        if (!id) return
        const part = s.family === 'use_cases' ? s.part : s.family === 'models' && s.part === '/vendors' ? s.part : ''
        await same(w, `/${s.family}/${id}${part}`)
        return
      }
      case 'catalog':
        await same(w, s.path)
        return
    }
  }

  it('answers every read with the caches as without them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 20, maxLength: 60 }), async (steps) => {
        const w = await seed(`prop${++runs}`)
        const via = { app: cached }
        for (const family of FAMILIES) for (const url of panel(w, family)) await same(w, url)
        for (const s of steps) {
          await run(w, s, via)
          if (READS.has(s.kind)) continue
          for (const url of w.watched) await same(w, url)
          for (const family of 'family' in s ? [s.family] : FAMILIES)
            for (const url of panel(w, family)) await same(w, url)
        }
        // At the end every record, and every list, once more.
        for (const family of FAMILIES) {
          await same(w, `/${family}?page_limit=100`)
          for (const id of w.records[family]) await same(w, `/${family}/${id}`)
        }
      }),
      { numRuns: RUNS },
    )
  }, 600_000)
})
