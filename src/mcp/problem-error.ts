/** A failure reported by a remote service: carries its problem document (code, detail, errors, request_id) as received. */
export class ProblemError extends Error {
  constructor(readonly problem: { code?: string; detail?: string; [field: string]: unknown }) {
    super(problem.detail ?? 'request failed')
  }
}
