import { existsSync, readFileSync } from 'node:fs'

// src/ when run from source, dist/src/ when compiled, dist/service/ when bundled: the package.json is one or two levels up.
const pkgUrl = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find(
  (url) => existsSync(url),
)
const pkg = JSON.parse(readFileSync(pkgUrl!, 'utf8')) as { name: string; version: string }

export const SERVICE_NAME = pkg.name
export const SERVICE_VERSION = pkg.version
