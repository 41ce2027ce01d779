import { existsSync } from 'node:fs'
import { mypySkipReason, pythonSkipReason } from './helpers/python.js'

/** Says once, at the top of the run, which parts of the suite cannot run here and why. */
export default function announceSkippedParts(): void {
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
