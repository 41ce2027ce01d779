import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

type Op = { kind: 'insert'; name: string } | { kind: 'delete'; index: number }

describeEachDialect('pagination (property)', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t.close())

  it('walking every page returns each stable record exactly once while others are inserted and deleted', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom(undefined, 'name', '-name', 'created_at', '-created_at', 'updated_at'),
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('insert' as const), name: fc.string({ minLength: 1, maxLength: 12 }) }),
            fc.record({ kind: fc.constant('delete' as const), index: fc.nat() }),
          ),
          { maxLength: 30 },
        ),
        async (initial, pageLimit, sort, ops: Op[]) => {
          const tenant = `pg-${run++}`
          const req = t.as(tenant, 'write')
          const create = async (name: string) => {
            const res = await req({ method: 'POST', url: '/use_cases', payload: { name } })
            return res.statusCode === 201 ? (res.json().id as string) : null
          }
          const existing: string[] = []
          for (let i = 0; i < initial; i++) existing.push((await create(`seed ${i} ${'zyxwvutsrq'[i % 10]}`))!)
          const deleted = new Set<string>()
          const live = [...existing]
          const seen: string[] = []
          let cursor: string | null = null
          let opIndex = 0
          do {
            const query: string = [
              `page_limit=${pageLimit}`,
              sort ? `sort=${sort}` : '',
              cursor ? `page_after=${cursor}` : '',
            ]
              .filter(Boolean)
              .join('&')
            const res = await req({ method: 'GET', url: `/use_cases?${query}` })
            expect(res.statusCode).toBe(200)
            const page = res.json()
            seen.push(...page.items.map((u: { id: string }) => u.id))
            cursor = page.pagination.next_cursor
            // Interleave a couple of concurrent changes between page fetches.
            for (const op of ops.slice(opIndex, opIndex + 2)) {
              if (op.kind === 'insert') {
                const id = await create(op.name)
                if (id) live.push(id)
              } else if (live.length > 0) {
                const victim = live.splice(op.index % live.length, 1)[0]
                await req({ method: 'DELETE', url: `/use_cases/${victim}` })
                deleted.add(victim)
              }
            }
            opIndex += 2
          } while (cursor)
          expect(new Set(seen).size).toBe(seen.length)
          const stable = existing.filter((id) => !deleted.has(id))
          for (const id of stable) expect(seen).toContain(id)
        },
      ),
      { numRuns: 25, seed: 20261122 },
    )
  }, 120_000)
})
