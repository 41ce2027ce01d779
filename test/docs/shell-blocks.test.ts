// Runs every shell block of the README and then of each docs/*.md page, in order, in one bash, against a freshly
// started service.
//
// Conventions for authors of the README and docs/:
// - a ```sh (or bash/shell) block runs unless the line before its fence is `<!-- readme-test: skip (why) -->`;
// - blocks share one shell: set variables in one block, use them in later ones; capture ids with `jq -r`;
// - $SERVICE_API_URL, $SERVICE_API_KEY (the key the service printed) are exported, as the README tells users;
// - every command must succeed: the shell runs with `set -eo pipefail` and curl fails on an HTTP error status
//   (--fail-with-body), so an example showing an error answer must say so in the command (`|| true`).
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
// The docs' index lists the pages in reading order; their blocks run in it, after the README's, since they continue
// its tour ($BASE, $TOKEN, $UC). Pages the index does not list run last, in name order.
const indexed = [
  ...readFileSync(join(root, 'docs/README.md'), 'utf8').matchAll(/^\| \[[^\]]+\]\(([\w.-]+\.md)\)/gm),
].map((m) => m[1])
const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))
const ordered = [
  ...indexed.filter((name) => pages.includes(name)),
  ...pages.filter((name) => !indexed.includes(name)).sort(),
]
const documents = [
  { file: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') },
  ...ordered.map((name) => ({ file: `docs/${name}`, text: readFileSync(join(root, 'docs', name), 'utf8') })),
]

interface Block {
  file: string
  line: number
  code: string
}

/** The shell blocks that run: fenced sh/bash/shell (also indented inside list items), minus the skipped ones. */
function shellBlocks(file: string, markdown: string): { run: Block[]; skipped: number } {
  const lines = markdown.split('\n')
  const run: Block[] = []
  let skipped = 0
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(sh|bash|shell)\s*$/.exec(lines[i])
    if (!open) continue
    const indent = open[1]
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length && lines[j].trim() !== '```'; j++)
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j])
    if (/^\s*<!--\s*readme-test:\s*skip\b/.test(lines[i - 1] ?? '')) skipped++
    else run.push({ file, line: i + 1, code: body.join('\n') })
    i = j
  }
  return { run, skipped }
}

const hasTools = ['curl', 'jq', 'bash'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0)
const describeWithTools = hasTools ? describe : describe.skip

describeWithTools(
  `README and docs/ shell blocks${hasTools ? '' : ' — skipped: curl, jq or bash is missing (bash .ci/run installs them)'}`,
  () => {
    let db: TestDatabase
    let service: ServiceProcess
    let apiKey: string
    let workDir: string
    beforeAll(async () => {
      db = await freshDatabase('sqlite')
      // A fresh service as `npm start` runs it: the starter library, a generated key printed once.
      service = await startServiceProcess({ ...db.env, LOG_LEVEL: 'warn' })
      apiKey = /export SERVICE_API_KEY=(sk_\w+)/.exec(service.output())![1]
      workDir = mkdtempSync(join(tmpdir(), 'aigov-docs-'))
    })
    afterAll(async () => {
      await service?.stop()
      await db?.drop()
      if (workDir) rmSync(workDir, { recursive: true, force: true })
    })

    // Every page's examples in one run: a hundred requests and more, which a loaded 2-core machine takes minutes over.
    it('finds the blocks, and every block that is not marked skip runs and succeeds', async () => {
      const found = documents.map(({ file, text }) => shellBlocks(file, text))
      const run = found.flatMap((f) => f.run)
      const skipped = found.reduce((sum, f) => sum + f.skipped, 0)
      // The README's tour and the pages that carry examples: a page losing its blocks to a broken fence fails here.
      for (const file of ['README.md', 'docs/api.md', 'docs/governance.md', 'docs/events.md', 'docs/security.md'])
        expect(
          run.some((block) => block.file === file),
          `${file} has shell blocks that run`,
        ).toBe(true)
      expect(run.length).toBeGreaterThanOrEqual(8)
      expect(skipped).toBeGreaterThanOrEqual(1)
      const script = [
        'set -eo pipefail',
        // Examples print answers for the reader; the run fails on any HTTP error instead.
        'curl() { command curl --fail-with-body "$@"; }',
        ...run.flatMap((block, i) => [`echo "@@block ${i} (${block.file} line ${block.line})" >&2`, block.code]),
        'echo "@@done" >&2',
      ].join('\n')
      const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve) => {
          const child = spawn('bash', ['-c', script], {
            cwd: workDir,
            env: { PATH: process.env.PATH, HOME: workDir, SERVICE_API_URL: service.baseUrl, SERVICE_API_KEY: apiKey },
          })
          let stdout = ''
          let stderr = ''
          child.stdout.on('data', (c) => (stdout += c))
          child.stderr.on('data', (c) => (stderr += c))
          child.on('close', (exitCode) => resolve({ code: exitCode, stdout, stderr }))
        },
      )
      const reached = [...stderr.matchAll(/@@block \d+ \(([^)]*)\)/g)].pop()?.[1]
      expect(code, `failed in the block at ${reached}:\n${stderr}\n--- stdout (end) ---\n${stdout.slice(-2000)}`).toBe(
        0,
      )
      expect(stderr).toContain('@@done')
      expect(stdout).not.toContain('"status":4')
    }, 180_000)
  },
)
