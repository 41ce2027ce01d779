import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../src/main.js'
import { GENERATED_FILE, renderTypes, serverDocument } from '../scripts/generate-types.mjs'

describe('generated OpenAPI types', () => {
  it('match what the current server generates (run `npm run client:generate` after changing a route)', async () => {
    const document = await serverDocument({
      buildApp,
      loadConfig,
      createLogger,
      openDatabase,
      createDeps,
      closeDeps,
      migrateToLatest,
    })
    const fresh: string = await renderTypes(document)
    const committed = readFileSync(GENERATED_FILE, 'utf8')
    // Compare line by line first so a drift names the first differing line instead of dumping 500 KB.
    const a = committed.split('\n')
    const b = fresh.split('\n')
    const first = a.findIndex((line, i) => line !== b[i])
    expect(first === -1 ? null : { line: first + 1, committed: a[first], generated: b[first] }).toBeNull()
    expect(committed).toBe(fresh)
  })
})
