// The TypeScript client examples of docs/clients.md, type-checked against the built package and run against a real service.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../src/index.js'
import { startService, type TestService } from './service.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const guide = readFileSync(join(ROOT, 'docs', 'clients.md'), 'utf8')
const start = guide.indexOf('## TypeScript client')
const section = guide.slice(start, guide.indexOf('\n## ', start + 1))
const examples = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])

/** Runs one example as an ES module from the repository root, so `@aigov/client` resolves to the workspace package. */
function run(code: string, service: TestService) {
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      PATH: process.env.PATH,
      SERVICE_API_URL: service.baseUrl,
      SERVICE_API_KEY: service.apiKey,
      SERVICE_TENANT: service.tenant,
    },
  })
  return { code: res.status, stdout: res.stdout, stderr: res.stderr }
}

describe('docs/clients.md TypeScript client examples', () => {
  let service: TestService
  let limited: TestService
  beforeAll(async () => {
    ;[service, limited] = await Promise.all([startService(), startService({ RATE_LIMIT_PER_MINUTE: '1' })])
  })
  afterAll(async () => {
    await Promise.all([service?.stop(), limited?.stop()])
  })

  it('has the three examples: create a use case, walk all models, handle a rate limit', () => {
    expect(examples).toHaveLength(3)
  })

  it('type-check against the built package', () => {
    const dir = mkdtempSync(join(ROOT, 'client', 'test', '.readme-'))
    try {
      const files = examples.map((code, i) => {
        const file = join(dir, `example-${i + 1}.mts`)
        writeFileSync(file, code)
        return file
      })
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
      const args = [
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--skipLibCheck',
        ...files,
      ]
      const res = spawnSync(process.execPath, [tsc, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
      expect(res.stdout + res.stderr).toBe('')
      expect(res.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('create a use case and link a model', () => {
    const res = run(examples[0], service)
    expect(res.stderr).toBe('')
    expect(res.stdout).toMatch(/^created uc_\w+ in step assessment\n$/)
  })

  it('walk all models', async () => {
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant })
    for (let i = 0; i < 120; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          client.models.create({ name: `Readme model ${i + j}`, status: 'in_production' }),
        ),
      )
    const res = run(examples[1], service)
    expect(res.stderr).toBe('')
    expect(res.stdout).toMatch(/\n121 models in production\n$/) // 120 here + the one the first example created
  })

  it('handle a rate-limit error', async () => {
    const res = run(examples[2], service)
    expect(res.stdout).toMatch(/^\d+ high-risk use cases, more: false\n$/)

    const client = createClient({ baseUrl: limited.baseUrl, apiKey: limited.apiKey, tenant: limited.tenant })
    expect((await client.system.ping()).error).toBeNull() // uses the key's one request of this minute
    const limitedRun = run(examples[2], limited)
    expect(limitedRun.stderr).toMatch(/^rate limited: 0\/1 left until \S+Z; retry in \d+ s\n$/)
  })
})
