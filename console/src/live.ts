// Which sections of the use case page an event concerns: a change reloads those, not the whole page.

export type PageSection = 'overview' | 'links' | 'questionnaires' | 'controls' | 'workflow' | 'history'

export const ALL_SECTIONS: readonly PageSection[] = [
  'overview',
  'links',
  'questionnaires',
  'controls',
  'workflow',
  'history',
]

/**
 * The sections an audit record (an event's record) changes, from its action; the history takes every change, so the
 * page adds it itself. An action the console does not know reloads everything rather than miss a change.
 */
export function sectionsOf(record: { action: string }): readonly PageSection[] {
  const { action } = record
  if (action.startsWith('questionnaire.')) return ['questionnaires']
  if (action.startsWith('use_case_control.') || action.startsWith('policy_pack.')) return ['controls']
  // Evidence is attached to controls and given as file answers.
  if (action.startsWith('evidence.')) return ['controls', 'questionnaires']
  if (action.startsWith('use_case.workflow_')) return ['workflow']
  if (/_(linked|unlinked)$/.test(action)) return ['links']
  if (action === 'use_case.updated' || action === 'use_case.deleted') return ['overview']
  return ALL_SECTIONS
}
