import { describe, expect, it } from 'vitest'
import { controlItems, controlsCut, type InboxItem, ownersOf, sortInbox } from '../src/inbox.js'
import {
  changedFields,
  checkAll,
  customValues,
  errorsByField,
  fieldSpecs,
  formValues,
  patchBody,
} from '../src/schema-form.js'
import { formatBytes, tooLarge } from '../src/bytes.js'
import { missingItems, questionAnchor, requirementAnchor } from '../src/gate.js'
import { apiQuery, parseRegistryQuery, withChange } from '../src/registry-query.js'
import {
  controlsApiQuery,
  controlsHref,
  controlsWithChange,
  isOverdue,
  parseControlsQuery,
  requiredEvidence,
  scopeChange,
  scopeOf,
} from '../src/controls-query.js'
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

describe('record forms from the OpenAPI schemas', () => {
  // The shapes the service's document uses (taken from GET /openapi.json): nullable as anyOf with null, enums by $ref.
  const doc = {
    components: {
      schemas: {
        RiskCategoryLevel: { enum: ['high', 'medium', 'low', 'none'] },
        OwnerRef: { type: 'object', required: ['owner_id'], properties: { owner_id: { type: 'string' } } },
        UseCaseCreate: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[^\\S\\p{Cc}]*[^\\s\\p{Cc}]\\P{Cc}*$' },
          },
        },
        UseCaseUpdate: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[^\\S\\p{Cc}]*[^\\s\\p{Cc}]\\P{Cc}*$' },
            description: { anyOf: [{ type: 'string', maxLength: 100000 }, { type: 'null' }] },
            ai_type: { anyOf: [{ type: 'string', maxLength: 100 }, { type: 'null' }] },
            risk_category_level: { anyOf: [{ $ref: '#/components/schemas/RiskCategoryLevel' }, { type: 'null' }] },
            regions: {
              anyOf: [
                { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 2 },
                { type: 'null' },
              ],
            },
            website: {
              anyOf: [{ type: 'string', minLength: 1, maxLength: 500, format: 'http-url' }, { type: 'null' }],
            },
            creator_id: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            owner: { anyOf: [{ $ref: '#/components/schemas/OwnerRef' }, { type: 'null' }] },
            custom_fields: { type: 'array' },
          },
        },
      },
    },
  }
  const specs = fieldSpecs(doc, 'UseCaseUpdate', 'UseCaseCreate')

  it('takes kinds, lengths, enums and what may be emptied from the schema', () => {
    expect(specs.map((s) => [s.name, s.kind, s.required])).toEqual([
      ['name', 'text', true],
      ['description', 'longtext', false],
      ['ai_type', 'text', false],
      ['risk_category_level', 'enum', false],
      ['regions', 'list', false],
      ['website', 'url', false],
      ['owner', 'owner', false],
    ])
    expect(specs.find((s) => s.name === 'risk_category_level')).toMatchObject({
      enumName: 'RiskCategoryLevel',
      enumValues: ['high', 'medium', 'low', 'none'],
    })
    expect(specs.find((s) => s.name === 'ai_type')?.maxLength).toBe(100)
  })

  it('checks what the service would refuse before sending', () => {
    const errors = checkAll(specs, {
      name: '   ',
      ai_type: 'x'.repeat(101),
      regions: ['EU', 'US', 'UK'],
      website: 'ftp://x',
      risk_category_level: 'extreme',
    })
    expect(Object.keys(errors).sort()).toEqual(['ai_type', 'name', 'regions', 'risk_category_level', 'website'])
    expect(errors.ai_type).toBe('At most 100 characters (now 101)')
    expect(checkAll(specs, { name: '' }).name).toBe('Fill this in')
    expect(checkAll(specs, { name: 'Credit scoring', website: 'https://example.com', regions: ['EU'] })).toEqual({})
  })

  it('sends only what the person changed, emptied fields as null', () => {
    const record = {
      name: 'Credit scoring',
      description: 'Scores',
      aiType: null,
      regions: ['EU'],
      owner: { ownerId: 'usr_1', ownerType: 'user', name: 'Ada' },
      customFields: [{ customFieldId: 'cf_1', name: 'Region', value: 'EU' }],
    }
    const original = formValues(specs, record)
    expect(original).toMatchObject({ name: 'Credit scoring', owner: 'usr_1', regions: ['EU'], ai_type: null })
    const { body, customSent } = patchBody(
      specs,
      original,
      { ...original, description: '', regions: ['EU', 'US'], owner: 'team_9' },
      customValues(record),
      { cf_1: 'EU', cf_2: true },
    )
    expect(body).toEqual({
      description: null,
      regions: ['EU', 'US'],
      owner: { ownerId: 'team_9' },
      customFields: [{ customFieldId: 'cf_2', value: true }],
    })
    expect(customSent).toEqual(['cf_2'])
    expect(patchBody(specs, original, original, customValues(record), customValues(record)).body).toEqual({})
  })

  it('places a refusal next to the field it names, and keeps the rest for the top of the form', () => {
    const placed = errorsByField(
      [
        { field: 'regions/1', message: 'must be at most 100 characters' },
        { field: 'custom_fields/0/value', message: 'must be one of the options' },
        { field: 'owner/owner_id', message: 'no such user or team' },
        { field: 'Idempotency-Key', message: 'reused' },
      ],
      specs,
      ['cf_7'],
    )
    expect(placed.byField).toEqual({
      regions: 'must be at most 100 characters',
      'cf:cf_7': 'must be one of the options',
      owner: 'no such user or team',
    })
    expect(placed.general).toEqual(['Idempotency-Key: reused'])
  })

  it('names the fields someone else changed', () => {
    const before = formValues(specs, { name: 'A', description: 'x' })
    const after = formValues(specs, { name: 'A', description: 'y', regions: ['EU'] })
    expect(changedFields(specs, before, after)).toEqual(['description', 'regions'])
  })
})

describe('the inbox for a person and their teams', () => {
  it('lists the open controls assigned to the person or one of their teams, saying which, with their use case', () => {
    const owners = ownersOf('usr_me', [{ id: 'team_risk', name: 'Risk' }])
    const control = (name: string, ownerId: string, useCaseId: string, dueDate: string | null) => ({
      name,
      useCaseId,
      useCaseName: `Use case ${useCaseId}`,
      dueDate,
      assignee: { ownerId },
    })
    const items = controlItems(
      [
        control('Mine', 'usr_me', 'uc_1', '2020-01-01'),
        control('Team', 'team_risk', 'uc_2', '2030-01-01'),
        control('Undated', 'usr_me', 'uc_2', null),
      ],
      owners,
      '2026-12-02',
    )
    expect(items.map((i) => [i.title, i.detail, i.href, i.overdue])).toEqual([
      ['Control “Mine”', 'Use case uc_1, due 2020-01-01', '/use-cases/uc_1#controls', true],
      ['Control “Team”', 'Use case uc_2, due 2030-01-01, for team Risk', '/use-cases/uc_2#controls', false],
      ['Control “Undated”', 'Use case uc_2', '/use-cases/uc_2#controls', false],
    ])
    expect(controlsCut('Risk', true, 100).text).toBe(
      'More than 100 overdue controls are assigned to team Risk; the inbox lists the 100 created first',
    )
  })
})

describe('uploads', () => {
  it('refuses a file over the limit before sending, saying the limit', () => {
    expect(tooLarge(26 * 1024 * 1024, 25 * 1024 * 1024)).toBe(
      'This file is 26 MB; the service takes files up to 25 MB.',
    )
    expect(tooLarge(10, 25 * 1024 * 1024)).toBeUndefined()
    expect(tooLarge(10, undefined)).toBeUndefined()
    expect(formatBytes(1536)).toBe('1.5 KB')
  })
})

describe('the registry filters of the dashboard links', () => {
  it('keeps stage, step, control status and overdue in the address and asks the API for them', () => {
    const q = parseRegistryQuery('stage=ws_1&step=assessment&control=pending&overdue=true')
    expect(withChange(q, {})).toBe('?stage=ws_1&step=assessment&control=pending&overdue=true')
    expect(apiQuery('use_cases', q)).toMatchObject({
      workflowStageId: 'ws_1',
      workflowStageStep: 'assessment',
      controlStatus: 'pending',
      overdueControls: true,
    })
    expect(apiQuery('models', q)).not.toHaveProperty('workflowStageId')
  })

  it('keeps questionnaire completion in the address, asks the API for it, and clears it', () => {
    const q = parseRegistryQuery('questionnaires=incomplete&risk=high')
    expect(q.questionnaires).toBe('incomplete')
    expect(apiQuery('use_cases', q)).toMatchObject({ questionnaireCompletion: 'incomplete', riskCategoryLevel: 'high' })
    expect(apiQuery('vendors', q)).not.toHaveProperty('questionnaireCompletion')
    expect(withChange(q, { questionnaires: undefined })).toBe('?risk=high')
    expect(withChange(q, { risk: undefined })).toBe('?questionnaires=incomplete')
    // A value the API does not know is left out rather than answered with a problem.
    expect(apiQuery('use_cases', parseRegistryQuery('questionnaires=some'))).not.toHaveProperty(
      'questionnaireCompletion',
    )
  })
})

describe('the controls table in the address', () => {
  it('reads its filters from the query, and a new filter starts at the first page', () => {
    const q = parseControlsQuery('status=pending&assignee=team_1&after=CURSOR&sort=name')
    expect(q).toEqual({ status: 'pending', assignee: 'team_1', after: 'CURSOR' })
    expect(controlsWithChange(q, { status: 'in_progress' })).toBe('?status=in_progress&assignee=team_1')
    expect(controlsWithChange(q, { after: 'NEXT' })).toBe('?status=pending&assignee=team_1&after=NEXT')
    expect(controlsWithChange(q, { assignee: undefined })).toBe('?status=pending')
    expect(controlsWithChange({}, {})).toBe('')
  })

  it('sends every filter again with the cursor, and leaves out a value the API does not know', () => {
    const q = parseControlsQuery('status=in_progress&open=true&assignee=usr_1&after=C')
    expect(controlsApiQuery(q)).toEqual({
      pageLimit: 50,
      status: 'in_progress',
      open: true,
      assigneeId: 'usr_1',
      pageAfter: 'C',
    })
    expect(controlsApiQuery(parseControlsQuery('overdue=false'))).toEqual({ pageLimit: 50, overdue: false })
    expect(controlsApiQuery(parseControlsQuery('status=done&open=yes&overdue=1'))).toEqual({
      pageLimit: 50,
    })
    expect(controlsApiQuery(parseControlsQuery('status=toString'))).toEqual({ pageLimit: 50 })
  })

  it('shows all, open or overdue controls, one at a time', () => {
    expect(scopeOf(parseControlsQuery(''))).toBe('all')
    expect(scopeOf(parseControlsQuery('open=true'))).toBe('open')
    expect(scopeOf(parseControlsQuery('open=true&overdue=true'))).toBe('overdue')
    const open = parseControlsQuery('open=true&status=pending&after=C')
    expect(controlsWithChange(open, scopeChange('overdue'))).toBe('?status=pending&overdue=true')
    expect(controlsWithChange(open, scopeChange('all'))).toBe('?status=pending')
  })

  it("gives the dashboard's figures the address of the controls they count", () => {
    expect(controlsHref({ status: 'in_progress' })).toBe('/controls?status=in_progress')
    expect(controlsHref(scopeChange('overdue'))).toBe('/controls?overdue=true')
    expect(parseControlsQuery(controlsHref(scopeChange('overdue')).split('?')[1])).toEqual({ overdue: 'true' })
  })

  it('calls overdue an open control due before today, and counts the required evidence met', () => {
    const today = '2026-12-03'
    expect(isOverdue({ status: 'pending', dueDate: '2026-12-02' }, today)).toBe(true)
    expect(isOverdue({ status: 'in_progress', dueDate: '2026-12-02' }, today)).toBe(true)
    expect(isOverdue({ status: 'pending', dueDate: today }, today)).toBe(false)
    expect(isOverdue({ status: 'implemented', dueDate: '2020-01-01' }, today)).toBe(false)
    expect(isOverdue({ status: 'not_applicable', dueDate: '2020-01-01' }, today)).toBe(false)
    expect(isOverdue({ status: 'pending', dueDate: null }, today)).toBe(false)
    expect(
      requiredEvidence([
        { required: true, met: true },
        { required: true, met: false },
        { required: false, met: true },
      ]),
    ).toBe('1 of 2')
    expect(requiredEvidence([{ required: false, met: false }])).toBe('None required')
  })
})
