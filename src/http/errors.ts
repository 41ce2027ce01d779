/** The closed set of error codes, each with its HTTP status and title. */
export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  process_incomplete: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  range_not_satisfiable: { status: 416, title: 'Range Not Satisfiable' },
  validation_failed: { status: 422, title: 'Unprocessable Content' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal: { status: 500, title: 'Internal Server Error' },
  unavailable: { status: 503, title: 'Service Unavailable' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export interface FieldError {
  field: string
  message: string
}

export class AppError extends Error {
  readonly status: number

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly extra?: Record<string, unknown>,
  ) {
    super(detail)
    this.status = ERROR_CODES[code].status
  }
}

export const notFound = (what: string, id: string) => new AppError('not_found', `${what} ${id} was not found`)
export const conflict = (detail: string) => new AppError('conflict', detail)
export const invalid = (field: string, message: string) =>
  new AppError('validation_failed', `${field}: ${message}`, [{ field, message }])
