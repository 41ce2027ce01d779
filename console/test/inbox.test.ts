import { describe, expect, it } from 'vitest'
import {
  INBOX_BOUNDS,
  mapLimit,
  ownersOf,
  type PageLike,
  questionnaireHref,
  questionnaireItems,
  readPages,
  recordsCut,
} from '../src/inbox.js'
import { ALL_SECTIONS, sectionsOf } from '../src/live.js'

// How far the inbox reads and what it says where it stops; which sections of the use case page an event reloads.

/** A list of `total` numbered items served in pages with a cursor, as the API's lists are; records each request. */
function pagedList(total: number) {
  const asked: { after: string | undefined; pageLimit: number }[] = []
  const read = async (after: string | undefined, pageLimit: number): Promise<PageLike<number>> => {
    asked.push({ after, pageLimit })
    const from = after ? Number(after) : 0
    const items = Array.from({ length: Math.max(0, Math.min(pageLimit, total - from)) }, (_, i) => from + i)
    const hasMore = from + items.length < total
    return { items, pagination: { hasMore, nextCursor: hasMore ? String(from + items.length) : null } }
  }
  return { read, asked }
}

describe('reading a list with its cursor, up to a bound', () => {
  it('reads every page of a list shorter than the bound, and says nothing was left', async () => {
    const list = pagedList(250)
    const got = await readPages(list.read, 1000)
    expect(got.items).toEqual(Array.from({ length: 250 }, (_, i) => i))
    expect(got.more).toBe(false)
    expect(list.asked.map((a) => a.after)).toEqual([undefined, '100', '200'])
  })

  it('stops at the bound and says more are left, asking for no more than it keeps', async () => {
    const list = pagedList(250)
    const got = await readPages(list.read, 150)
    expect(got.items).toHaveLength(150)
    expect(got.items.at(-1)).toBe(149)
    expect(got.more).toBe(true)
    expect(list.asked).toEqual([
      { after: undefined, pageLimit: 100 },
      { after: '100', pageLimit: 50 },
    ])
  })

  it('says nothing was left when the list ends exactly at the bound', async () => {
    const got = await readPages(pagedList(100).read, 100)
    expect(got).toMatchObject({ more: false })
    expect(got.items).toHaveLength(100)
  })

  it('passes a failed read on (the inbox shows it) instead of listing part of it as all', async () => {
    await expect(
      readPages(async () => {
        throw new Error('The service did not answer.')
      }, 10),
    ).rejects.toThrow('The service did not answer.')
  })
})

describe('running reads side by side', () => {
  it('keeps at most the limit in flight and gives the results in order', async () => {
    let inFlight = 0
    let most = 0
    const got = await mapLimit(
      Array.from({ length: 20 }, (_, i) => i),
      INBOX_BOUNDS.parallel,
      async (n) => {
        inFlight++
        most = Math.max(most, inFlight)
        await new Promise((r) => setTimeout(r, (n % 3) * 2))
        inFlight--
        return n * 2
      },
    )
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i * 2))
    expect(most).toBe(INBOX_BOUNDS.parallel)
    expect(await mapLimit([], 6, async () => 1)).toEqual([])
  })
})

describe('questionnaires waiting on records I or my teams own', () => {
  const owners = ownersOf('usr_me', [{ id: 'team_1', name: 'Model risk' }])
  const progress = (required: number, requiredAnswered: number) => ({
    required,
    requiredAnswered,
    complete: required === requiredAnswered,
  })

  it('lists the incomplete ones of a model, a vendor and a use case, each linked to where it is answered', () => {
    const attachments = [
      { key: 'MODEL-CARD', name: 'Model card', progress: progress(4, 1) },
      { key: 'DONE', name: 'Done already', progress: progress(2, 2) },
    ]
    expect(
      questionnaireItems(
        { kind: 'model', id: 'mdl_1', name: 'Credit GBM', owner: { ownerId: 'team_1' } },
        attachments,
        owners,
      ),
    ).toEqual([
      {
        kind: 'questionnaire',
        title: 'Answer “Model card”',
        detail: 'model Credit GBM: 3 required answer(s) missing, for team Model risk',
        href: '/models/mdl_1#questionnaires',
      },
    ])
    expect(
      questionnaireItems(
        { kind: 'vendor', id: 'vnd_1', name: 'Acme AI', owner: { ownerId: 'usr_me' } },
        attachments,
        owners,
      )[0],
    ).toMatchObject({ detail: 'vendor Acme AI: 3 required answer(s) missing', href: '/vendors/vnd_1#questionnaires' })
    expect(questionnaireHref('use_case', 'uc_1')).toBe('/use-cases/uc_1#questionnaires')
    expect(questionnaireItems({ kind: 'use_case', id: 'uc_1', name: 'X' }, [], owners)).toEqual([])
  })

  it('says where it stopped reading, linking to the whole list of what that owner owns', () => {
    expect(recordsCut('model', 'usr_me', '', 100)).toEqual({
      text: 'More models are owned by you than the 100 most recently changed the inbox looks into: open all models you own',
      href: '/models?owner=usr_me&sort=-updated_at',
    })
    expect(recordsCut('use_case', 'team_1', 'Model risk', 100)).toMatchObject({
      text: expect.stringContaining('owned by team Model risk'),
      href: '/use-cases?owner=team_1&sort=-updated_at',
    })
  })
})

describe('the sections of the use case page an event reloads', () => {
  it('reloads only the section the change concerns', () => {
    expect(sectionsOf({ action: 'questionnaire.answered' })).toEqual(['questionnaires'])
    expect(sectionsOf({ action: 'questionnaire.attached' })).toEqual(['questionnaires'])
    expect(sectionsOf({ action: 'use_case_control.updated' })).toEqual(['controls'])
    expect(sectionsOf({ action: 'use_case_control.evidence_linked' })).toEqual(['controls'])
    expect(sectionsOf({ action: 'policy_pack.applied' })).toEqual(['controls'])
    expect(sectionsOf({ action: 'evidence.deleted' })).toEqual(['controls', 'questionnaires'])
    expect(sectionsOf({ action: 'use_case.workflow_advanced' })).toEqual(['workflow'])
    expect(sectionsOf({ action: 'use_case.workflow_rejected' })).toEqual(['workflow'])
    expect(sectionsOf({ action: 'use_case.model_linked' })).toEqual(['links'])
    expect(sectionsOf({ action: 'use_case.risk_scenario_unlinked' })).toEqual(['links'])
    expect(sectionsOf({ action: 'use_case.updated' })).toEqual(['overview'])
  })

  it('reloads everything for a change it does not know, rather than miss it', () => {
    expect(sectionsOf({ action: 'use_case.something_new' })).toEqual(ALL_SECTIONS)
  })
})
