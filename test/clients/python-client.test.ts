// The Python client (clients/python): its generated files are current, its pytest suite passes against real
// service processes, and mypy --strict accepts the package and the README's examples. pytest and mypy run
// concurrently, as two processes, to keep the wall time down.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_DIR, renderPython } from '../../clients/python/scripts/generate.mjs'
import { serverDocument } from '../../client/scripts/generate-types.mjs'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../src/main.js'
import { pythonSkipReason, mypySkipReason, PYTHON } from '../helpers/python.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PACKAGE = join(ROOT, 'clients', 'python')

describe('Python client generated files', () => {
  it('match what the current server generates (run `npm run client:generate:python` after changing a route)', async () => {
    const document = await serverDocument({
      buildApp,
      loadConfig,
      createLogger,
      openDatabase,
      createDeps,
      closeDeps,
      migrateToLatest,
    })
    for (const [name, fresh] of Object.entries(renderPython(document))) {
      const committed = readFileSync(join(PACKAGE_DIR, name), 'utf8')
      const a = committed.split('\n')
      const b = fresh.split('\n')
      const first = a.findIndex((line, i) => line !== b[i])
      expect(first === -1 ? null : { file: name, line: first + 1, committed: a[first], generated: b[first] }).toBeNull()
      expect(committed).toBe(fresh)
    }
  })
})

interface Finished {
  code: number | null
  output: string
}

function run(args: string[], cwd: string): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(PYTHON, args, {
    cwd,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, output })))
  return { child, done }
}

describe.skipIf(pythonSkipReason() !== undefined)('Python client', () => {
  const examplesDir = mkdtempSync(join(tmpdir(), 'aigov-python-readme-'))
  let pytest: ReturnType<typeof run>
  let mypy: ReturnType<typeof run> | undefined

  beforeAll(() => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const start = readme.indexOf('## Python client')
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
    const examples = [...section.matchAll(/```python\n([\s\S]*?)```/g)].map((m, i) => {
      const file = join(examplesDir, `readme_example_${i + 1}.py`)
      writeFileSync(file, m[1])
      return file
    })
    pytest = run(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], PACKAGE)
    if (mypySkipReason() === undefined) {
      mypy = run(
        [
          '-m',
          'mypy',
          '--strict',
          '--python-version',
          '3.9',
          '--cache-dir',
          join(examplesDir, 'mypy-cache'),
          'aigov_client',
          'tests',
          ...examples,
        ],
        PACKAGE,
      )
    }
  })
  afterAll(() => {
    pytest?.child.kill()
    mypy?.child.kill()
    rmSync(examplesDir, { recursive: true, force: true })
  })

  it('passes its pytest suite against real service processes', { timeout: 300_000 }, async () => {
    const { code, output } = await pytest.done
    expect(code, output).toBe(0)
    expect(output).toMatch(/\d+ passed/)
  })

  it.skipIf(mypySkipReason() !== undefined)(
    'passes mypy --strict: package, its tests and the README examples',
    { timeout: 300_000 },
    async () => {
      const { code, output } = await mypy!.done
      expect(code, output).toBe(0)
      expect(output).toMatch(/^Success: no issues found in \d+ source files/)
    },
  )
})

describe('Python client generator', () => {
  // A document in the shape clients are generated from: named components.schemas and $refs everywhere.
  const schemas = {
    RiskLevel: { enum: ['high', 'medium', 'low', 'none'] },
    Owner: {
      type: 'object',
      required: ['owner_id'],
      properties: { owner_id: { type: 'string' }, owner_type: { enum: ['user', 'team'] } },
    },
    UseCase: {
      type: 'object',
      required: ['id', 'name', 'risk_category_level'],
      properties: {
        id: { type: 'string' },
        name: { type: 'string', description: 'Unique per tenant.' },
        risk_category_level: { anyOf: [{ $ref: '#/components/schemas/RiskLevel' }, { type: 'null' }] },
        owner: { anyOf: [{ $ref: '#/components/schemas/Owner' }, { type: 'null' }] },
        regions: { type: 'array', items: { type: 'string' } },
        changes: { type: 'object', additionalProperties: { type: 'array', items: {} } },
      },
    },
    UseCaseCreate: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, 'x-odd key': { type: 'integer' } },
    },
    UseCasePage: {
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: '#/components/schemas/UseCase' } },
        pagination: {
          type: 'object',
          properties: { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'] } },
        },
      },
    },
    Link: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  }
  const json = (ref: string) => ({
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
  })
  const document = {
    openapi: '3.1.0',
    components: { schemas },
    paths: {
      '/api/v1/integration/use_cases': {
        get: {
          operationId: 'listUseCases',
          parameters: [
            { in: 'query', name: 'page_limit', schema: { type: 'integer' } },
            { in: 'query', name: 'page_after', schema: { type: 'string' } },
            { in: 'query', name: 'from', schema: { $ref: '#/components/schemas/RiskLevel' } },
          ],
          responses: { 200: json('UseCasePage'), 304: { description: 'Not Modified' } },
        },
        post: {
          operationId: 'createUseCase',
          parameters: [{ in: 'header', name: 'idempotency-key', schema: { type: 'string' } }],
          requestBody: { required: true, ...json('UseCaseCreate') },
          responses: { 201: json('UseCase') },
        },
      },
      '/api/v1/integration/use_cases/{id}/models': {
        post: {
          operationId: 'linkUseCaseModel',
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, ...json('Link') },
          responses: { 201: json('UseCase') },
        },
      },
      '/api/v1/integration/evidence': {
        post: {
          operationId: 'createEvidence',
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  properties: { file: { type: 'string', format: 'binary' }, title: { type: 'string' } },
                },
              },
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['kind', 'url'],
                  properties: { kind: { const: 'link' }, url: { type: 'string' }, title: { type: 'string' } },
                },
              },
            },
          },
          responses: { 201: json('Link') },
        },
      },
      '/api/v1/integration/evidence/{id}/content': {
        get: {
          operationId: 'getEvidenceContent',
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          responses: {
            200: { content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          },
        },
      },
      '/api/v1/integration/events': {
        get: {
          operationId: 'streamEvents',
          parameters: [{ in: 'query', name: 'type', schema: { type: 'string' } }],
          responses: { 200: { content: { 'text/event-stream': { schema: { type: 'string' } } } } },
        },
      },
      '/api/v1/integration/configuration': {
        get: {
          operationId: 'exportConfiguration',
          parameters: [{ in: 'query', name: 'include', schema: { const: 'records', type: 'string' } }],
          responses: {
            200: {
              content: {
                'application/json': { schema: { $ref: '#/components/schemas/Link' } },
                'application/x-tar': { schema: { type: 'string', format: 'binary' } },
              },
            },
          },
        },
      },
      '/api/v1/integration/configuration/plan': {
        post: {
          operationId: 'planConfiguration',
          parameters: [
            { in: 'query', name: 'prune', schema: { type: 'boolean' } },
            { in: 'header', name: 'idempotency-key', schema: { type: 'string' } },
          ],
          requestBody: {
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Link' } },
              'application/x-tar': { schema: { type: 'string', format: 'binary' } },
            },
          },
          responses: { 200: json('UseCase') },
        },
      },
      '/api/v1/integration/use_cases/{id}/models/{model_id}': {
        delete: {
          operationId: 'unlinkUseCaseModel',
          parameters: [
            { in: 'path', name: 'id', required: true, schema: { type: 'string' } },
            { in: 'path', name: 'model_id', required: true, schema: { type: 'string' } },
          ],
          responses: { 204: { description: 'Unlinked.' } },
        },
      },
    },
  }
  const files = renderPython(document)

  it('names models after the component schemas, enums as Literals, required and optional keys apart', () => {
    const models = files['models.py']
    expect(models).toContain('RiskLevel = Literal["high", "medium", "low", "none"]')
    expect(models).toContain(
      'class _UseCaseRequired(TypedDict):\n    id: str\n    #: Unique per tenant.\n    name: str\n    risk_category_level: Optional[RiskLevel]\n',
    )
    expect(models).toContain(
      'class UseCase(_UseCaseRequired, total=False):\n    owner: Optional[Owner]\n    regions: List[str]\n    changes: Dict[str, List[Any]]\n',
    )
    expect(models).toContain(
      'UseCaseCreate = TypedDict("UseCaseCreate", {"name": "str", "x-odd key": "int"}, total=False)',
    )
  })

  it('types methods with the referenced models: pages, bodies, single-field links, path arguments', () => {
    const resources = files['_resources.py']
    expect(resources).toContain(
      'def list(self, *, page_limit: Optional[int] = None, page_after: Optional[str] = None, from_: Optional[RiskLevel] = None,',
    )
    expect(resources).toContain('-> Page[UseCase]:')
    expect(resources).toContain(
      'def list_all(self, *, page_size: Optional[int] = None, from_: Optional[RiskLevel] = None,',
    )
    expect(resources).toContain('query={"page_limit": page_size, "from": from_}')
    expect(resources).toContain('def create(self, body: UseCaseCreate, *,')
    expect(resources).toContain('def link(self, model_id: str, *,')
    expect(resources).toContain('body={"id": model_id}')
    expect(resources).toContain('self._t.call("unlinkUseCaseModel", (self._args[0], model_id),')
    expect(resources).toContain('async def unlink(self, model_id: str, *,')
    expect(resources).toContain('"createUseCase": Operation("POST", "/use_cases", "json", idempotency_key=True),')
  })

  it('uploads multipart files (or sends JSON) and answers binary downloads as bytes', () => {
    const resources = files['_resources.py']
    expect(resources).toContain(
      'def create(self, body: Optional[CreateEvidenceBody] = None, file: Optional[FileInput] = None, *, title: Optional[str] = None,',
    )
    expect(resources).toContain('body=body, files={"file": file} if file is not None else None, data={"title": title},')
    expect(resources).toContain('"getEvidenceContent": Operation("GET", "/evidence/{id}/content", "bytes"),')
    expect(resources).toMatch(/class EvidenceContentResource:[\s\S]*def get\(self, \*, timeout[^\n]*-> bytes:/)
  })

  it('streams tar bundles to and from a path or binary file in `_bundle` twins, leaving the plain methods JSON', () => {
    const resources = files['_resources.py']
    expect(resources).toContain(
      'def export(self, *, timeout: Optional[float] = None, max_retries: Optional[int] = None, headers: Optional[Mapping[str, str]] = None) -> Link:',
    )
    expect(resources).toContain(
      'def export_bundle(self, destination: BundleOutput, *, timeout: Optional[float] = None, max_retries: Optional[int] = None, headers: Optional[Mapping[str, str]] = None) -> int:',
    )
    expect(resources).toContain(
      'self._t.call("exportConfiguration", (), query={"include": "records"}, body=None, sink=destination,',
    )
    expect(resources).toContain('def plan_bundle(self, bundle: BundleInput, *, prune: Optional[bool] = None,')
    expect(resources).toContain('idempotency_key: Optional[str] = None) -> UseCase:')
    expect(resources).toContain(
      'self._t.call("planConfiguration", (), query={"prune": prune}, body=None, upload=bundle,',
    )
    expect(resources).toContain('async def export_bundle(self, destination: BundleOutput, *,')
  })

  it('reads event streams as iterators of events, resumable by Last-Event-ID', () => {
    const resources = files['_resources.py']
    expect(resources).toContain(
      'def stream(self, *, type: Optional[str] = None, timeout: Optional[float] = None, max_retries: Optional[int] = None, headers: Optional[Mapping[str, str]] = None, last_event_id: Optional[str] = None) -> Iterator[Event]:',
    )
    expect(resources).toContain('-> AsyncIterator[Event]:')
    expect(resources).toContain(
      'return self._t.events("streamEvents", (), query={"type": type}, last_event_id=last_event_id,',
    )
  })

  it.skipIf(pythonSkipReason() !== undefined)('renders Python that runs (models) and parses (namespaces)', () => {
    const check =
      'import ast, sys; exec(compile(sys.argv[1], "models.py", "exec"), {"__name__": "models"}); ast.parse(sys.argv[2])'
    const res = spawnSync(PYTHON, ['-c', check, files['models.py'], files['_resources.py']], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(res.stderr).toBe('')
    expect(res.status).toBe(0)
  })
})
