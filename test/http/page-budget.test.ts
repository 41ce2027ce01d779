import { afterAll, beforeAll, expect, it } from 'vitest'
import { PAGE_TEXT_BUDGET } from '../../src/shared/pagination.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// A list page ends early once its records' long text reaches PAGE_TEXT_BUDGET: pages of 100 records of 99 KB
// descriptions arrive as several pages, and the cursor walk still gives every record once, in order.

const LONG = 99_000
const N = 25

describeEachDialect('list pages within the text budget', (dialect) => {
  let t: TestApp
  let useCaseId: string
  beforeAll(async () => {
    t = await startTestApp(dialect)
    const write = t.as('acme', 'write')
    useCaseId = (await write({ method: 'POST', url: '/use_cases', payload: { name: 'hub' } })).json().id
    for (let i = 0; i < N; i++) {
      const model = (
        await write({
          method: 'POST',
          url: '/models',
          payload: { name: `m${String(i).padStart(2, '0')}`, summary: 's'.repeat(LONG) },
        })
      ).json()
      await write({ method: 'POST', url: `/use_cases/${useCaseId}/models`, payload: { id: model.id } })
      await write({
        method: 'POST',
        url: '/use_cases',
        payload: { name: `uc${String(i).padStart(2, '0')}`, description: 'd'.repeat(LONG) },
      })
    }
  })
  afterAll(async () => t?.close())

  const walk = async (path: string) => {
    const pages: { size: number; names: string[] }[] = []
    let cursor: string | null = null
    do {
      const sep = path.includes('?') ? '&' : '?'
      const res = await t.as(
        'acme',
        'read',
      )({ method: 'GET', url: `${path}${sep}page_limit=100${cursor ? `&page_after=${cursor}` : ''}` })
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
      const body = res.json()
      pages.push({
        size: res.body.length,
        names: body.items.map((r: { name?: string; resource_name?: string }) => r.name ?? r.resource_name),
      })
      cursor = body.pagination.next_cursor
      expect(body.pagination.has_more).toBe(cursor !== null)
    } while (cursor)
    return pages
  }

  for (const [name, path, expected] of [
    [
      'a family list (rendered by the database)',
      '/models?sort=name',
      [...Array(N).keys()].map((i) => `m${String(i).padStart(2, '0')}`),
    ],
    [
      'a family list sorted descending',
      '/use_cases?sort=-name&q=uc',
      [...Array(N).keys()].reverse().map((i) => `uc${String(i).padStart(2, '0')}`),
    ],
    [
      'a relationship list',
      `/use_cases/__ID__/models`,
      [...Array(N).keys()].map((i) => `m${String(i).padStart(2, '0')}`),
    ],
    [
      'the audit log',
      '/audit_logs?action=model.created',
      [...Array(N).keys()].map((i) => `m${String(i).padStart(2, '0')}`),
    ],
  ] as const) {
    it(`${name}: pages of about the budget, every record once`, async () => {
      const pages = await walk(path.replace('__ID__', useCaseId))
      expect(pages.flatMap((p) => p.names)).toEqual(expected)
      expect(pages.length).toBeGreaterThan(1)
      for (const page of pages) expect(page.size).toBeLessThan(PAGE_TEXT_BUDGET + 2 * LONG + 50_000)
      expect(pages[0].names.length).toBeGreaterThan(3)
    })
  }

  it('the POST audit query ends its pages the same way', async () => {
    const res = await t.as(
      'acme',
      'read',
    )({ method: 'POST', url: '/audit_logs/query', payload: { action: ['use_case.created'], page_limit: 100 } })
    expect(res.statusCode).toBe(200)
    expect(res.json().pagination.has_more).toBe(true)
    expect(res.json().items.length).toBeLessThan(N)
  })

  it('short records still fill a page to its limit', async () => {
    for (let i = 0; i < 5; i++)
      await t.as('acme', 'write')({ method: 'POST', url: '/vendors', payload: { name: `v${i}`, description: 'short' } })
    const res = await t.as('acme', 'read')({ method: 'GET', url: '/vendors?page_limit=5' })
    expect(res.json().items).toHaveLength(5)
    expect(res.json().pagination.has_more).toBe(false)
  })
})
