import { afterAll, beforeAll, expect } from 'vitest'
import type { DialectName } from '../../src/db/create-db.js'
import { startTestApp, type TestApp } from './harness.js'

export interface SuiteApp {
  /** The suite's app: started before its first test, closed after its last. */
  readonly t: TestApp
  /** app.inject as a write key of tenant `acme`. */
  write: ReturnType<TestApp['as']>
  /** app.inject as an admin key of tenant `acme` (custom field definitions). */
  admin: ReturnType<TestApp['as']>
  /** POSTs as `write` (as `admin` for custom fields), expects 201 and returns the created record. */
  post(url: string, payload: object): Promise<any>
}

/** One app for the tests of a describe block, with a writer of tenant `acme`. Call it in the block's body. */
export function suiteApp(dialect: DialectName): SuiteApp {
  let app: TestApp | undefined
  beforeAll(async () => {
    app = await startTestApp(dialect)
  })
  afterAll(async () => app?.close())

  const running = (): TestApp => {
    if (!app) throw new Error('the suite app starts in beforeAll: use it inside tests')
    return app
  }
  const write: SuiteApp['write'] = (opts) => running().as('acme', 'write')(opts)
  const admin: SuiteApp['admin'] = (opts) => running().as('acme', 'admin')(opts)
  return {
    get t() {
      return running()
    },
    write,
    admin,
    async post(url, payload) {
      // Defining custom fields is an admin's act; every other collection takes a write key.
      const res = await (url.startsWith('/custom_fields') ? admin : write)({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
      return res.json()
    },
  }
}
