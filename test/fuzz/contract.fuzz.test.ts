import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'
import { dereference } from '../helpers/openapi.js'
import { type JsonSchema, oddUnicode, valueFor } from '../helpers/schema-arbitrary.js'

// Fuzzing from the contract: requests for every operation in /openapi.json, valid and broken, each checked
// against what the document promises (status declared, body matching that status's schema), invariant 5
// (no 5xx without a dependency down) and "an invalid request changes nothing" (audit_seq does not move).
// Reproduce a failure with FUZZ_SEED=<seed>; run longer with FUZZ_RUNS=<n>.

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000)
const SEED = Number(process.env.FUZZ_SEED ?? 20261122)
const TENANT = 'fuzz'
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

const PREFIXES: Record<string, string> = {
  use_cases: 'uc',
  models: 'mdl',
  vendors: 'vnd',
  risk_types: 'rt',
  risk_scenarios: 'rs',
  workflow_stages: 'ws',
  policy_control_bases: 'pcb',
  policy_control_versions: 'pcv',
  policy_controls: 'pcb',
  policy_packs: 'pp',
  questionnaires: 'q',
  controls: 'ucc',
  audit_logs: 'al',
  api_keys: 'key',
}

/** Every byte percent-encoded (encodeURIComponent throws on lone surrogates). */
const percentEncode = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void

interface Param {
  name: string
  in: 'path' | 'query' | 'header'
  required?: boolean
  schema: JsonSchema
}
interface Operation {
  method: string
  path: string
  id: string
  params: Param[]
  body: JsonSchema | undefined
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>
  public: boolean
}

type Mutation =
  | 'valid'
  | 'wrongType'
  | 'outOfBounds'
  | 'badFormat'
  | 'extraField'
  | 'hugeString'
  | 'oddUnicode'
  | 'badCursor'
  | 'wrongMethod'
  | 'badAuth'
  | 'malformedJson'
  | 'unknownQuery'

/** Mutations after which the request is certainly wrong and must get a 4xx. */
const CERTAINLY_INVALID = new Set<Mutation>([
  'wrongType',
  'outOfBounds',
  'badFormat',
  'extraField',
  'badCursor',
  'wrongMethod',
  'badAuth',
  'malformedJson',
  'unknownQuery',
])

interface Case {
  op: Operation
  path: Record<string, string | { known: number }>
  query: Record<string, unknown>
  body: unknown
  headers: Record<string, string>
  mutation: Mutation
  pick: number
  odd: string
}

describe('contract fuzzing from /openapi.json', () => {
  let t: TestApp
  let doc: any
  let ops: Operation[]
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
  addFormats(ajv)
  const validators = new Map<JsonSchema, ValidateFunction>()
  const validate = (schema: JsonSchema, value: unknown) => {
    let fn = validators.get(schema)
    if (!fn) validators.set(schema, (fn = ajv.compile(schema)))
    return fn(value) ? null : ajv.errorsText(fn.errors)
  }
  const known = new Map<string, string[]>() // id prefix, or 'key', -> values seen in responses
  const tokens: Record<string, string> = {}
  let adminKey: string
  const ownKeys = new Set<string>()

  const remember = (value: unknown, field?: string): void => {
    if (typeof value === 'string') {
      if (ownKeys.has(value)) return
      const id = /^([a-z]+)_[0-9a-z]{26}$/.exec(value)
      const bucket = id ? id[1] : field === 'key' || field === 'control_key' ? 'key' : undefined
      if (bucket) {
        const list = known.get(bucket) ?? []
        if (!list.includes(value) && list.length < 50) known.set(bucket, [...list, value])
      }
    } else if (Array.isArray(value)) for (const v of value) remember(v)
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) remember(v, k)
  }

  beforeAll(async () => {
    t = await startTestApp('sqlite', { SERVICE_STARTER_LIBRARY: 'true' })
    // Operations carry their schemas inline here, so generated values and validators need no reference resolution.
    doc = dereference((await t.app.inject({ url: '/openapi.json' })).json())
    ops = []
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        ops.push({
          method: method.toUpperCase(),
          path,
          id: op.operationId,
          params: op.parameters ?? [],
          body: op.requestBody?.content?.['application/json']?.schema,
          responses: op.responses,
          public:
            (Array.isArray(op.security) && op.security.length === 0) ||
            path.endsWith('/auth/token') ||
            !path.startsWith(PREFIX),
          // Counterexamples print the operation by its id, not its whole schema.
          [fc.toStringMethod]: () => op.operationId,
        } as Operation)
      }
    }
    adminKey = await t.apiKey(TENANT, 'admin')
    tokens.admin = await t.token(TENANT, 'admin')
    tokens.read = await t.token(TENANT, 'read')
    tokens.other = await t.token('fuzz-other', 'admin')
    // The fuzzer may revoke any key but its own.
    const own = (
      await t.app.inject({
        url: `${PREFIX}/api_keys?page_limit=100`,
        headers: { authorization: `Bearer ${tokens.admin}` },
      })
    ).json()
    for (const key of own.items) ownKeys.add(key.id)
    // A few records of each kind, so valid requests also reach existing ones (the starter library adds policies).
    const as = t.as(TENANT, 'admin')
    for (const [url, payload] of [
      ['/use_cases', { name: 'fuzz seed use case' }],
      ['/models', { name: 'fuzz seed model' }],
      ['/vendors', { name: 'fuzz seed vendor' }],
      ['/risk_types', { name: 'fuzz seed risk type' }],
      ['/workflow_stages', { name: 'fuzz seed stage' }],
    ] as const)
      remember((await as({ method: 'POST', url, payload })).json())
    for (const url of [
      '/policy_packs',
      '/questionnaires',
      '/policy_controls',
      '/risk_scenarios',
      '/workflow_stages',
      '/audit_logs?page_limit=5',
      '/api_keys',
    ]) {
      remember((await as({ method: 'GET', url })).json())
    }
  }, 60_000)
  afterAll(async () => t?.close())

  const auditSeq = async () => {
    const row = await sql<{ total: number }>`select coalesce(sum(audit_seq), 0) as total from tenants`.execute(
      t.deps.database.db,
    )
    return Number(row.rows[0].total)
  }

  const caseFor = (op: Operation): fc.Arbitrary<Case> => {
    const pathModel: Record<string, fc.Arbitrary<string | { known: number }>> = {}
    const queryModel: Record<string, fc.Arbitrary<unknown>> = {}
    const headerModel: Record<string, fc.Arbitrary<unknown>> = {}
    for (const p of op.params) {
      // A path segment is never empty, '.' or '..' (URL normalisation would make that another route).
      if (p.in === 'path')
        pathModel[p.name] = fc.oneof(
          { weight: 4, arbitrary: fc.nat().map((known) => ({ known })) },
          {
            weight: 1,
            arbitrary: (valueFor({ minLength: 1, ...p.schema }) as fc.Arbitrary<string>).filter(
              (v) => v !== '.' && v !== '..',
            ),
          },
        )
      // A made-up cursor is the badCursor mutation's business; other parameters appear one time in four.
      else if (p.in === 'query' && p.name !== 'page_after')
        queryModel[p.name] = p.required
          ? valueFor(p.schema)
          : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, valueFor(p.schema))
      else headerModel[p.name] = valueFor(p.schema)
    }
    return fc.record({
      op: fc.constant(op),
      path: fc.record(pathModel),
      // Query parameters are mostly absent, so lists mostly answer with data.
      query: fc.record(queryModel).map((q) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined))),
      body: op.body ? valueFor(op.body) : fc.constant(undefined),
      headers: fc.record(headerModel).map((h) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]))),
      mutation: fc.oneof(
        { weight: 4, arbitrary: fc.constant<Mutation>('valid') },
        {
          weight: 6,
          arbitrary: fc.constantFrom<Mutation>(
            'wrongType',
            'outOfBounds',
            'badFormat',
            'extraField',
            'hugeString',
            'oddUnicode',
            'badCursor',
            'wrongMethod',
            'badAuth',
            'malformedJson',
            'unknownQuery',
          ),
        },
      ),
      pick: fc.nat(),
      odd: oddUnicode,
    })
  }

  /** Turns a generated case into a concrete request, applying its mutation; says whether it is certainly invalid. */
  const build = (c: Case) => {
    const { op } = c
    let method = op.method
    let url = op.path
    for (const [name, value] of Object.entries(c.path)) {
      let concrete: string
      if (typeof value === 'string') concrete = value
      else {
        const param = op.params.find((p) => p.name === name)!
        const collection = name === 'id' ? /([a-z_]+)\/\{id\}/.exec(op.path)?.[1] : name.replace(/_id$/, 's')
        const prefix =
          /^\^([a-z]+)_/.exec(param.schema.pattern ?? '')?.[1] ??
          (name === 'key' ? 'key' : (PREFIXES[collection ?? ''] ?? 'none'))
        const pool = known.get(prefix) ?? []
        concrete = pool.length > 0 ? pool[value.known % pool.length] : 'none'
      }
      url = url.replace(`{${name}}`, percentEncode(concrete))
    }
    const query: Record<string, unknown> = { ...c.query }
    const body: unknown = c.body === undefined ? undefined : structuredClone(c.body)
    let rawBody: string | undefined
    let contentType = body === undefined ? undefined : 'application/json'
    const headers: Record<string, string> = { ...c.headers }
    let auth: string | undefined = op.public ? undefined : `Bearer ${tokens.admin}`
    if (op.path.endsWith('/auth/token') && c.pick % 2 === 0) {
      headers['x-api-key'] = adminKey
      headers['x-tenant'] = TENANT
    }
    let mutation = c.mutation
    let offRoute = false // the mutation made a path no operation has

    // Where a field-level mutation can land: top-level body fields, then query parameters.
    const bodyFields =
      body && typeof body === 'object' && !Array.isArray(body) && op.body?.properties
        ? Object.entries<JsonSchema>(op.body.properties)
        : []
    const queryFields = op.params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema] as [string, JsonSchema])
    const fields = [
      ...bodyFields.map(([n, s]) => ['body', n, s] as const),
      ...queryFields.map(([n, s]) => ['query', n, s] as const),
    ]
    const target = fields.length > 0 ? fields[c.pick % fields.length] : undefined
    const set = (where: 'body' | 'query', name: string, value: unknown) => {
      if (where === 'body') (body as Record<string, unknown>)[name] = value
      else query[name] = value
    }
    const leaf = (s: JsonSchema): JsonSchema =>
      (s.anyOf ?? s.oneOf ?? [s]).find((x: JsonSchema) => x.type !== 'null') ?? s

    switch (mutation) {
      case 'wrongType': {
        if (!target) {
          mutation = 'unknownQuery'
          query.fuzz_unknown = '1'
          break
        }
        const [where, name, schema] = target
        if (where === 'query') {
          const type = leaf(schema).type
          if (type === 'integer' || type === 'number' || type === 'boolean') query[name] = `not-a-${type}`
          else {
            mutation = 'hugeString'
            query[name] = 'q'.repeat(20_000)
          }
          break
        }
        const candidates = [12345, 'a string', true, null, [], {}, [1, 'x'], { nested: true }]
        const wrong = candidates.find((v) => validate(schema, v) !== null)
        set(where, name, wrong)
        break
      }
      case 'outOfBounds': {
        const s = target ? leaf(target[2]) : undefined
        if (!target || !s) {
          mutation = 'unknownQuery'
          query.fuzz_unknown = '1'
          break
        }
        if (s.maxLength !== undefined) set(target[0], target[1], 'x'.repeat(s.maxLength + 1))
        else if (s.maximum !== undefined) set(target[0], target[1], s.maximum + 1)
        else if (s.minimum !== undefined) set(target[0], target[1], s.minimum - 1)
        else if (s.maxItems !== undefined)
          set(
            target[0],
            target[1],
            Array.from({ length: s.maxItems + 1 }, (_, i) => `item-${i}`),
          )
        else if (s.minLength !== undefined && s.minLength > 0) set(target[0], target[1], '')
        else mutation = 'valid'
        break
      }
      case 'badFormat': {
        const formatted = fields.find(([, , s]) => leaf(s).format || leaf(s).pattern || leaf(s).enum)
        if (!formatted) {
          mutation = 'extraField'
          return build({ ...c, mutation: 'extraField' })
        }
        const s = leaf(formatted[2])
        const candidates = s.format
          ? [['yesterday', '2024-13-45T25:61:00Z', '2024-02-30', '1e9'][c.pick % 4]]
          : ['not-one-of-them', '!! bad pattern !!', ' ', '\t\n']
        const bad = candidates.find((v) => validate(s, v) !== null)
        if (bad === undefined) mutation = 'valid'
        else set(formatted[0], formatted[1], bad)
        break
      }
      case 'extraField':
        if (bodyFields.length > 0 && op.body?.additionalProperties === false)
          (body as Record<string, unknown>).fuzz_extra_field = 'x'
        else {
          mutation = 'unknownQuery'
          query.fuzz_unknown = '1'
        }
        break
      case 'unknownQuery':
        query[`zz_${c.pick % 1000}`] = c.odd
        break
      case 'hugeString':
        if (target) set(target[0], target[1], target[0] === 'body' ? 'h'.repeat(300_000) : 'h'.repeat(20_000))
        else headers['x-request-id'] = 'r'.repeat(5000)
        break
      case 'oddUnicode':
        if (target) set(target[0], target[1], c.odd)
        else {
          url += `/${percentEncode(c.odd)}${c.pick % 3 === 0 ? '%ff%fe' : ''}`
          offRoute = true
        }
        break
      case 'badCursor':
        if (!queryFields.some(([n]) => n === 'page_after')) {
          mutation = 'unknownQuery'
          query.fuzz_unknown = '1'
          break
        }
        query.page_after = [
          '!!!',
          'AAAA',
          Buffer.from('{"a":1}').toString('base64url'),
          Buffer.from('["x"]').toString('base64url'),
          `${Buffer.from(c.odd).toString('base64url')}$`,
        ][c.pick % 5]
        break
      case 'wrongMethod': {
        const declared = new Set(Object.keys(doc.paths[op.path]).map((m) => m.toUpperCase()))
        const others = METHODS.filter((m) => !declared.has(m))
        if (others.length === 0) {
          mutation = 'valid'
          break
        }
        method = others[c.pick % others.length]
        break
      }
      case 'badAuth':
        if (op.public && !op.path.endsWith('/auth/token')) {
          mutation = 'valid'
          break
        }
        if (op.path.endsWith('/auth/token')) {
          headers['x-api-key'] = ['sk_wrong', `${adminKey}x`, ''][c.pick % 3]
          headers['x-tenant'] = TENANT
          break
        }
        // A read key may do what GET does, and POST /audit_logs/query (a query sent as a body).
        auth = [
          undefined,
          'Bearer garbage',
          'Basic dXNlcjpwYXNz',
          `Bearer ${tokens.admin.slice(0, -2)}xx`,
          `Bearer ${tokens.admin}`,
          op.method === 'GET' || op.id === 'queryAuditLogs' ? undefined : `Bearer ${tokens.read}`,
        ][c.pick % 6]
        if (c.pick % 6 === 4) headers['x-tenant'] = 'someone-else'
        break
      case 'malformedJson':
        if (body === undefined && op.method === 'GET') {
          mutation = 'unknownQuery'
          query.fuzz_unknown = '1'
          break
        }
        if (c.pick % 2 === 0) {
          rawBody = '{"name": "unterminated'
          contentType = 'application/json'
        } else {
          rawBody = 'name=x'
          contentType = 'text/plain'
        }
        if (body === undefined && c.pick % 2 === 1) mutation = 'valid' // a bodiless route may ignore a stray body
        break
    }

    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue
      for (const item of Array.isArray(v) ? v : [v])
        search.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item))
    }
    if (auth) headers.authorization = auth
    if (contentType) headers['content-type'] = contentType
    const qs = search.toString()
    return {
      method,
      url: qs ? `${url}?${qs}` : url,
      headers,
      payload: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
      mutation,
      invalid: CERTAINLY_INVALID.has(mutation) || offRoute,
      offRoute,
    }
  }

  const check = (c: Case, req: ReturnType<typeof build>, res: LightMyRequestResponse): string[] => {
    const problems: string[] = []
    const status = res.statusCode
    if (status >= 500) problems.push(`answered ${status}: ${res.body.slice(0, 300)}`)
    if (req.invalid && status < 400) problems.push(`a certainly invalid request (${req.mutation}) answered ${status}`)
    if (req.offRoute) {
      if (![400, 404, 405].includes(status)) problems.push(`a path no operation has answered ${status}`)
      const error = validate(c.op.responses['400'].content!['application/problem+json'].schema, JSON.parse(res.body))
      if (error) problems.push(`its problem body does not match: ${error}`)
      return problems
    }
    if (req.method !== c.op.method) {
      // 405 with Allow, unless another route's parameter takes the path (GET /audit_logs/query is GET /audit_logs/{id}).
      if (!(status === 405 && res.headers.allow) && ![400, 404].includes(status))
        problems.push(`wrong method ${req.method} answered ${status}`)
      const error = validate(c.op.responses['400'].content!['application/problem+json'].schema, JSON.parse(res.body))
      if (error) problems.push(`its problem body does not match: ${error}`)
      return problems
    }
    const declared = c.op.responses[String(status)]
    if (!declared) return [...problems, `status ${status} is not declared for ${c.op.id}`]
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
    if (status === 204 || !declared.content) {
      if (res.body !== '') problems.push(`status ${status} declares no body but got ${res.body.slice(0, 100)}`)
      return problems
    }
    const media = declared.content[type]
    if (!media) return [...problems, `content type "${type}" is not declared for ${status} of ${c.op.id}`]
    const parsed = type.includes('json') && !type.includes('ndjson') ? JSON.parse(res.body) : res.body
    const error = validate(media.schema, parsed)
    if (error) problems.push(`body of ${status} does not match its schema: ${error}; body ${res.body.slice(0, 300)}`)
    return problems
  }

  it(`holds for ${RUNS} generated requests across every operation (seed ${SEED})`, async () => {
    expect(ops.length).toBeGreaterThan(80)
    const statuses = new Map<string, number>()
    const reached = new Set<string>()
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops).chain(caseFor), async (c) => {
        const req = build(c)
        const before = await auditSeq()
        const res = await t.app.inject({
          method: req.method as 'GET',
          url: req.url,
          headers: req.headers,
          payload: req.payload,
        })
        const after = await auditSeq()
        const problems = check(c, req, res)
        if (res.statusCode >= 400 && after !== before)
          problems.push(`a ${res.statusCode} answer changed data (audit_seq ${before} -> ${after})`)
        if (res.statusCode < 300 && res.body && String(res.headers['content-type']).startsWith('application/json'))
          remember(JSON.parse(res.body))
        const key = `${req.mutation === 'valid' ? 'valid' : 'broken'} ${res.statusCode}`
        statuses.set(key, (statuses.get(key) ?? 0) + 1)
        if (res.statusCode < 300) reached.add(c.op.id)
        if (process.env.FUZZ_VERBOSE && req.mutation === 'valid' && res.statusCode === 400)
          console.log(req.method, req.url, res.body)
        if (problems.length > 0) {
          throw new Error(
            `${req.method} ${req.url.slice(0, 300)} [${req.mutation}] body=${String(req.payload ?? '').slice(0, 300)}\n  ${problems.join('\n  ')}`,
          )
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    )
    const summary = [...statuses.entries()]
      .sort()
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')
    console.log(`fuzz: ${RUNS} requests over ${ops.length} operations; 2xx reached on ${reached.size}; ${summary}`)
  }, 180_000)
})
