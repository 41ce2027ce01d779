import { spawnSync } from 'node:child_process'

/** Debian's interpreter, where python3-httpx, python3-pytest and python3-mypy install (PYTHON overrides it). */
export const PYTHON = process.env.PYTHON ?? '/usr/bin/python3'

function missing(modules: string): boolean {
  const res = spawnSync(PYTHON, ['-c', `import ${modules}`], { encoding: 'utf8', timeout: 30_000 })
  return res.status !== 0
}

let pythonReason: string | undefined | null = null
let mypyReason: string | undefined | null = null

/** Why the Python client's tests cannot run here, or undefined when they can. */
export function pythonSkipReason(): string | undefined {
  if (pythonReason === null) {
    pythonReason = missing('httpx, pytest')
      ? `the Python client's tests are skipped: ${PYTHON} cannot import httpx and pytest (Debian: apt-get install python3-httpx python3-pytest; bash .ci/run installs them)`
      : undefined
  }
  return pythonReason
}

/** Why mypy cannot check the Python client here, or undefined when it can. */
export function mypySkipReason(): string | undefined {
  if (mypyReason === null) {
    mypyReason = missing('mypy')
      ? `mypy --strict on the Python client is skipped: ${PYTHON} cannot import mypy (Debian: python3-mypy)`
      : undefined
  }
  return mypyReason
}
