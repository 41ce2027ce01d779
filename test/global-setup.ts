import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'
import { THREAD_SOURCES } from '../src/shared/thread-entry.js'
import { mypySkipReason, pythonSkipReason } from './helpers/python.js'

/**
 * Bundles the worker threads' TypeScript modules into dist/threads, where src/shared/thread-entry.ts finds them
 * when the service runs from its sources: Node 20 cannot run TypeScript in a thread, and a fresh bundle per run
 * means a test never runs a stale build of a thread.
 */
async function buildThreads(): Promise<void> {
  await build({
    input: Object.fromEntries(
      Object.entries(THREAD_SOURCES).map(([name, source]) => [
        name,
        fileURLToPath(new URL(`../${source}`, import.meta.url)),
      ]),
    ),
    platform: 'node',
    external: [/^better-sqlite3(\/|$)/],
    output: { dir: fileURLToPath(new URL('../dist/threads', import.meta.url)), format: 'esm' },
    logLevel: 'warn',
  })
}

export default async function setup(): Promise<void> {
  await buildThreads()
  announceSkippedParts()
}

/** Says once, at the top of the run, which parts of the suite cannot run here and why. */
function announceSkippedParts(): void {
  const reasons: string[] = []
  if (!process.env.DATABASE_URL?.startsWith('postgres')) {
    reasons.push(
      'PostgreSQL suites are skipped: DATABASE_URL does not point at PostgreSQL (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)',
    )
  }
  if (!process.env.REDIS_URL)
    reasons.push('Redis suites are skipped: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379)')
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
  if (!existsSync(chromium))
    reasons.push(
      `the /docs browser check is skipped: no browser at ${chromium} (bash .ci/run installs Debian's chromium)`,
    )
  const python = pythonSkipReason() ?? mypySkipReason()
  if (python) reasons.push(python)
  for (const reason of reasons) console.warn(`note: ${reason}`)
}
