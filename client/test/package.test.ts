// The packed client as a user gets it: `npm pack`, installed from the tarball into a project outside the
// repository, used from ESM, CommonJS, and TypeScript compiled for nodenext and for commonjs, against a live service.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startService, type TestService } from './service.js'

const CLIENT_DIR = fileURLToPath(new URL('..', import.meta.url))
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url))

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const res = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  })
  return { code: res.status, out: `${res.stdout}${res.stderr}`, stdout: res.stdout }
}

// Each program creates a use case named after itself and prints its id, without SERVICE_TENANT (it defaults to "default").
const USE = (name: string) => `
  const client = createClient()
  const created = await client.useCases.create({ name: '${name}', riskCategoryLevel: 'low' })
  if (created.error) throw new Error(created.error.message)
  const read = await client.useCases.get(created.data.id)
  if (read.error || read.data.name !== '${name}') throw new Error('read back failed')
  console.log(read.data.id)
`
const PROGRAMS: Record<string, { file: string; type: 'module' | 'commonjs'; code: string; tsconfig?: object }> = {
  esm: { file: 'main.mjs', type: 'module', code: `import { createClient } from '@aigov/client'\n${USE('from ESM')}` },
  cjs: {
    file: 'main.cjs',
    type: 'commonjs',
    code: `const { createClient } = require('@aigov/client')\n;(async () => {${USE('from CommonJS')}})().catch((e) => { console.error(e); process.exit(1) })`,
  },
  'ts-nodenext': {
    file: 'main.ts',
    type: 'module',
    code: `import { createClient, type UseCase } from '@aigov/client'\n${USE('from TS nodenext')}\nconst typed: UseCase['id'] = read.data.id\nvoid typed\n`,
    tsconfig: { module: 'nodenext', moduleResolution: 'nodenext' },
  },
  'ts-commonjs': {
    file: 'main.ts',
    type: 'commonjs',
    code: `import { createClient, type UseCase } from '@aigov/client'\nasync function main(): Promise<void> {${USE('from TS commonjs')}\nconst typed: UseCase['id'] = read.data.id\nvoid typed\n}\n// A rejection left unhandled exits with code 1.\nvoid main()\n`,
    tsconfig: { module: 'commonjs' },
  },
}

describe('the packed client', () => {
  let service: TestService
  let project: string
  let packed: string[] = []
  beforeAll(async () => {
    service = await startService({ SERVICE_TENANT: 'default' })
    project = mkdtempSync(join(tmpdir(), 'aigov-client-consumer-'))
    // The suite built the client (npm test builds first); pack what was built.
    const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], CLIENT_DIR)
    expect(pack.code, pack.out).toBe(0)
    packed = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path)
    const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'))!
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
    const install = run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', `./${tarball}`],
      project,
    )
    expect(install.code, install.out).toBe(0)
  }, 120_000)
  afterAll(async () => {
    await service?.stop()
    if (project) rmSync(project, { recursive: true, force: true })
  })

  it('contains its ESM and CommonJS builds with types, its README and LICENSE', () => {
    for (const file of [
      'README.md',
      'LICENSE',
      'package.json',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
    ]) {
      expect(packed).toContain(file)
    }
    expect(packed.some((f) => f.includes('test/'))).toBe(false)
  })

  it.each(Object.keys(PROGRAMS))('works from %s against a live service', (name) => {
    const program = PROGRAMS[name]
    const dir = join(project, name)
    mkdirSync(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: program.type }))
    writeFileSync(join(dir, program.file), program.code)
    let entry = program.file
    if (program.tsconfig) {
      const compilerOptions = {
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
        ...program.tsconfig,
      }
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [program.file] }))
      const tsc = run(process.execPath, [TSC, '-p', 'tsconfig.json'], dir)
      expect(tsc.code, tsc.out).toBe(0)
      entry = 'out/main.js'
    }
    const res = run(process.execPath, [entry], dir, {
      SERVICE_API_URL: service.baseUrl,
      SERVICE_API_KEY: service.apiKey,
    })
    expect(res.code, res.out).toBe(0)
    expect(res.stdout.trim()).toMatch(/^uc_\w+$/)
  })
})
