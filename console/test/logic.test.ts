import { describe, expect, it } from 'vitest'
import { type InboxItem, sortInbox } from '../src/inbox.js'
import { missingItems, questionAnchor, requirementAnchor } from '../src/gate.js'
import { apiQuery, parseRegistryQuery, withChange } from '../src/registry-query.js'
import { rememberReturn, safeReturnTo, signInPath, ssoStartUrl, takeReturn } from '../src/session.js'

// The console's logic that runs in the browser without the page: where people are sent, what the tables ask for.

function memoryStorage() {
  const map = new Map<string, string>()
  return {
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  }
}

describe('getting back to the page after signing in', () => {
  it('returns only to pages of the console itself', () => {
    expect(safeReturnTo('/use-cases/uc_1?x=1#controls')).toBe('/use-cases/uc_1?x=1#controls')
    for (const bad of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil',
      'javascript:alert(1)',
      '',
      null,
      '/sign-in?return_to=/x',
    ])
      expect(safeReturnTo(bad)).toBe('/')
  })

  it('puts the page in the sign-in address and in the single sign-on start, under /console', () => {
    expect(signInPath('/use-cases/uc_1')).toBe('/sign-in?return_to=%2Fuse-cases%2Fuc_1')
    expect(signInPath('/')).toBe('/sign-in')
    const url = new URL(ssoStartUrl(' acme ', '/models?q=x'), 'http://h')
    expect(url.pathname).toBe('/auth/oidc/start')
    expect(url.searchParams.get('tenant')).toBe('acme')
    expect(url.searchParams.get('return_to')).toBe('/console/models?q=x')
  })

  it('remembers the page across a one-time link, once', () => {
    const storage = memoryStorage()
    rememberReturn(storage, '/use-cases/uc_1')
    expect(takeReturn(storage)).toBe('/use-cases/uc_1')
    expect(takeReturn(storage)).toBeUndefined()
    rememberReturn(storage, '//evil.example')
    expect(takeReturn(storage)).toBeUndefined()
  })
})

describe('a refused gate', () => {
  it('turns each missing answer and evidence requirement into a link to where it is done', () => {
    const items = missingItems([
      { field: 'questionnaires/INTAKE/decision', message: 'required question "What does it decide?" is not answered' },
      {
        field: 'controls/ucc_01/evidence_requirements/0',
        message: 'control OVERSIGHT: required evidence "Procedure" has none linked',
      },
      { field: 'something_else', message: 'other' },
    ])
    expect(items.map((i) => [i.kind, i.anchor])).toEqual([
      ['answer', questionAnchor('INTAKE', 'decision')],
      ['evidence', requirementAnchor('ucc_01', 0)],
      ['other', 'workflow'],
    ])
    expect(questionAnchor('AI INTAKE', 'a.b')).toBe('q-AI_INTAKE-a_b')
    expect(missingItems(undefined)).toEqual([])
  })
})

describe('the registry table in the address', () => {
  it('reads its state from the query, and a new filter starts at the first page', () => {
    const q = parseRegistryQuery('q=credit&risk=high&after=CURSOR')
    expect(q).toEqual({ q: 'credit', risk: 'high', after: 'CURSOR', sort: '-created_at' })
    expect(withChange(q, { risk: 'low' })).toBe('?q=credit&risk=low')
    expect(withChange(q, { after: 'NEXT' })).toBe('?q=credit&risk=high&after=NEXT')
    expect(withChange(q, { sort: 'name' })).toBe('?q=credit&sort=name&risk=high')
  })

  it('asks the API for exactly the filters of its kind', () => {
    const q = parseRegistryQuery('risk=high&status=active&owner=usr_1&field=cf_1&value=EU&after=C')
    expect(apiQuery('use_cases', q)).toEqual({
      pageLimit: 50,
      sort: '-created_at',
      riskCategoryLevel: 'high',
      ownerId: 'usr_1',
      customFieldId: 'cf_1',
      customFieldValue: 'EU',
      pageAfter: 'C',
    })
    expect(apiQuery('vendors', q)).toMatchObject({ status: 'active' })
    expect(apiQuery('vendors', q)).not.toHaveProperty('riskCategoryLevel')
    expect(apiQuery('models', parseRegistryQuery('field=cf_1'))).not.toHaveProperty('customFieldId')
  })
})

describe('the inbox order', () => {
  it('puts overdue controls first, then the earliest due, then answers before gates', () => {
    const item = (kind: InboxItem['kind'], title: string, extra: Partial<InboxItem> = {}): InboxItem => ({
      kind,
      title,
      detail: '',
      href: '/',
      ...extra,
    })
    const sorted = sortInbox([
      item('gate', 'Move A'),
      item('questionnaire', 'Answer A'),
      item('control', 'Later', { due: '2030-01-01' }),
      item('control', 'Overdue', { due: '2020-01-01', overdue: true }),
    ])
    expect(sorted.map((i) => i.title)).toEqual(['Overdue', 'Later', 'Answer A', 'Move A'])
  })
})
