// The Python client (clients/python): its generated files are current, its pytest suite passes against real
// service processes, and mypy --strict accepts the package and the README's examples. pytest and mypy run
// concurrently, as two processes, to keep the wall time down.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_DIR, renderPython } from '../clients/python/scripts/generate.mjs'
import { serverDocument } from '../client/scripts/generate-types.mjs'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../src/main.js'
import { pythonSkipReason, mypySkipReason, PYTHON } from './helpers/python.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PACKAGE = join(ROOT, 'clients', 'python')

describe('Python client generated files', () => {
  it('match what the current server generates (run `npm run client:generate:python` after changing a route)', async () => {
    const document = await serverDocument({ buildApp, loadConfig, createLogger, openDatabase, createDeps, closeDeps, migrateToLatest })
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
  const child = spawn(PYTHON, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
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
      mypy = run(['-m', 'mypy', '--strict', '--python-version', '3.9', '--cache-dir', join(examplesDir, 'mypy-cache'), 'aigov_client', ...examples], PACKAGE)
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

  it.skipIf(mypySkipReason() !== undefined)('passes mypy --strict, package and README examples', { timeout: 300_000 }, async () => {
    const { code, output } = await mypy!.done
    expect(code, output).toBe(0)
    expect(output).toMatch(/^Success: no issues found in \d+ source files/)
  })
})
