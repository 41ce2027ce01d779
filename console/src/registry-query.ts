// The registry table's state lives in the address (shareable, back button works): read and written here.

import { readAddress, writeAddress } from './address'

export interface RegistryQuery {
  q?: string
  sort: string
  risk?: string
  status?: string
  owner?: string
  field?: string
  value?: string
  /** Use cases: workflow stage id, step, a control status, overdue controls ("true"), questionnaire completion. */
  stage?: string
  step?: string
  control?: string
  overdue?: string
  questionnaires?: string
  after?: string
}

const KEYS = [
  'q',
  'sort',
  'risk',
  'status',
  'owner',
  'field',
  'value',
  'stage',
  'step',
  'control',
  'overdue',
  'questionnaires',
  'after',
] as const

export function parseRegistryQuery(search: string): RegistryQuery {
  return { sort: '-created_at', ...readAddress(search, KEYS) }
}

/** A changed filter or sort starts again at the first page; only paging keeps the other values. */
export function withChange(current: RegistryQuery, change: Partial<RegistryQuery>): string {
  return writeAddress(KEYS, current, change, { sort: '-created_at' })
}

/** The values of the API's questionnaire_completion filter: another in the address is no filter. */
const COMPLETIONS = new Set(['complete', 'incomplete', 'none'])

/** The list call's query for the API (camelCase, as the client takes it). */
export function apiQuery(kind: 'use_cases' | 'models' | 'vendors', q: RegistryQuery, pageLimit = 50) {
  return {
    pageLimit,
    sort: q.sort,
    ...(q.q ? { q: q.q } : {}),
    ...(kind === 'use_cases' && q.risk ? { riskCategoryLevel: q.risk } : {}),
    ...(kind === 'use_cases' && q.stage ? { workflowStageId: q.stage } : {}),
    ...(kind === 'use_cases' && q.step ? { workflowStageStep: q.step } : {}),
    ...(kind === 'use_cases' && q.control ? { controlStatus: q.control } : {}),
    ...(kind === 'use_cases' && (q.overdue === 'true' || q.overdue === 'false')
      ? { overdueControls: q.overdue === 'true' }
      : {}),
    ...(kind === 'use_cases' && q.questionnaires && COMPLETIONS.has(q.questionnaires)
      ? { questionnaireCompletion: q.questionnaires }
      : {}),
    ...(kind !== 'use_cases' && q.status ? { status: q.status } : {}),
    ...(q.owner ? { ownerId: q.owner } : {}),
    ...(q.field && q.value ? { customFieldId: q.field, customFieldValue: q.value } : {}),
    ...(q.after ? { pageAfter: q.after } : {}),
  }
}
