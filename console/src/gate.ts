// A refused gate (409 process_incomplete) names what is missing in errors[].field; each becomes a link to where it is
// filled on the use case page.

export interface MissingItem {
  kind: 'answer' | 'evidence' | 'other'
  message: string
  /** The anchor on the use case page where it is done. */
  anchor: string
}

export function missingItems(errors: { field?: string | null; message?: string | null }[] | undefined): MissingItem[] {
  return (errors ?? []).map((e) => {
    const field = e.field ?? ''
    const message = e.message ?? field
    const answer = /^questionnaires\/([^/]+)\/(.+)$/.exec(field)
    if (answer) return { kind: 'answer', message, anchor: questionAnchor(answer[1], answer[2]) }
    const evidence = /^controls\/([^/]+)\/evidence_requirements\/(\d+)$/.exec(field)
    if (evidence) return { kind: 'evidence', message, anchor: requirementAnchor(evidence[1], Number(evidence[2])) }
    return { kind: 'other', message, anchor: 'workflow' }
  })
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_')
export const questionAnchor = (key: string, questionId: string) => `q-${slug(key)}-${slug(questionId)}`
export const requirementAnchor = (controlId: string, requirement: number) => `req-${slug(controlId)}-${requirement}`
