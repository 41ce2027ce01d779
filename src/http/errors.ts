/** The closed set of error codes, each with its HTTP status and title. */
export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  process_incomplete: { status: 409, title: 'Conflict' },
  request_timeout: { status: 408, title: 'Request Timeout' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  // A tenant's stored evidence would pass EVIDENCE_TENANT_QUOTA_MB.
  quota_exceeded: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  range_not_satisfiable: { status: 416, title: 'Range Not Satisfiable' },
  validation_failed: { status: 422, title: 'Unprocessable Content' },
  // 422 as the original interface answers a duplicate: its integrations read 422 on create as "exists, skip".
  already_exists: { status: 422, title: 'Unprocessable Content' },
  // An answer that cannot be given whole (an MCP tool result) past its size limit; the detail names the streamed route.
  response_too_large: { status: 422, title: 'Unprocessable Content' },
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
/** Several invalid fields at once: the detail names each as `field: message`, as `invalid` does one. */
export const invalidFields = (errors: FieldError[]) =>
  new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors)

/** A duplicate name or key: 422 naming the field, with the id of the record that holds it. */
export const alreadyExists = (
  what: string,
  field: 'name' | 'key' | 'email',
  value: string,
  existingId: string | undefined,
) =>
  new AppError(
    'already_exists',
    `a ${what} ${field === 'name' ? 'named' : `with ${field}`} "${value}" already exists in this tenant${existingId ? ` (${existingId})` : ''}`,
    [{ field, message: `already exists${existingId ? ` (${existingId})` : ''}` }],
    existingId ? { existing_id: existingId } : undefined,
  )
