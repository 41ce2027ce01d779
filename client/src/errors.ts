import { type Camelize, camelize } from './case.js'
import type { components } from './generated/openapi.js'

export type ErrorKind =
  | 'authentication'
  | 'authorization'
  | 'not_found'
  | 'conflict'
  | 'already_exists'
  | 'validation'
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'connection'

/** An RFC 9457 problem body as the service sends it (snake_case, as on the wire). */
export type ProblemBody = components['schemas']['Problem']

/** An RFC 9457 problem body as the service sends it, in camelCase. */
export type Problem = Camelize<ProblemBody>

export interface ClientError {
  kind: ErrorKind
  /** HTTP status; absent for timeout and connection errors. */
  status?: number
  message: string
  /** The `X-Request-ID` of the response (quote it when reporting a problem). */
  requestId?: string
  /**
   * The response body: the problem document as sent (snake_case), or the raw text when it is not one (a proxy's
   * error page); absent when there was no body or no response (timeout, connection).
   */
  body?: ProblemBody | string
  /** @deprecated Use `body`. The problem document in camelCase, when the service sent one; kept for existing callers. */
  details?: Problem
  /** already_exists only: the id of the record that already has this name or key. */
  existingId?: string
  /** rate_limit only: seconds to wait before retrying. */
  retryAfter?: number
  /** rate_limit only: requests allowed per window. */
  limit?: number
  /** rate_limit only: requests left in the window. */
  remaining?: number
  /** rate_limit only: when the window resets (RFC 3339). */
  resetTime?: string
}

/** What every call resolves to: never a throw for HTTP or network failures. */
export type Result<T> = { data: T; error: null } | { data: null; error: ClientError }

/** Thrown by `listAll()` iterators (an iterator cannot return a result), carrying the page's error. */
export class ClientRequestError extends Error {
  constructor(readonly error: ClientError) {
    super(error.message)
    this.name = 'ClientRequestError'
  }
}

export const ok = <T>(data: T): Result<T> => ({ data, error: null })
export const fail = <T = never>(error: ClientError): Result<T> => ({ data: null, error })

export function kindOfStatus(status: number, code?: string): ErrorKind {
  // A duplicate is a 422 like a validation failure; its code tells them apart.
  if (code === 'already_exists') return 'already_exists'
  if (status === 401) return 'authentication'
  if (status === 403) return 'authorization'
  if (status === 404) return 'not_found'
  if (status === 409) return 'conflict'
  if (status === 429) return 'rate_limit'
  if (status >= 500) return 'server'
  return 'validation'
}

const numberOrUndefined = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN
  return Number.isFinite(n) ? n : undefined
}

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(header: string | null): number | undefined {
  if (header === null) return undefined
  const seconds = numberOrUndefined(header)
  if (seconds !== undefined) return Math.max(0, seconds)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

const isProblem = (body: unknown): body is components['schemas']['Problem'] =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  typeof (body as { status?: unknown }).status === 'number'

/** The error for a non-2xx response, from its status, headers and (possibly absent or non-JSON) body and its text. */
export function errorFromResponse(response: Response, body: unknown, text = ''): ClientError {
  const status = response.status
  const requestId = response.headers.get('x-request-id') ?? undefined
  const problem = isProblem(body) ? body : undefined
  const error: ClientError = {
    kind: kindOfStatus(status, problem?.code),
    status,
    message: problem?.detail ?? problem?.title ?? `HTTP ${status} ${response.statusText}`.trim(),
    requestId: requestId ?? problem?.request_id,
    body: problem ?? (text === '' ? undefined : text),
    details: problem ? camelize(problem) : undefined,
  }
  if (error.kind === 'already_exists' && typeof problem?.existing_id === 'string')
    error.existingId = problem.existing_id
  if (error.kind === 'rate_limit') {
    const headers = response.headers
    error.retryAfter = parseRetryAfter(headers.get('retry-after')) ?? numberOrUndefined(problem?.retry_after)
    error.limit =
      numberOrUndefined(problem?.limit) ??
      numberOrUndefined(headers.get('ratelimit-limit') ?? headers.get('x-ratelimit-limit'))
    error.remaining =
      numberOrUndefined(problem?.remaining) ??
      numberOrUndefined(headers.get('ratelimit-remaining') ?? headers.get('x-ratelimit-remaining'))
    const resetSeconds = numberOrUndefined(headers.get('ratelimit-reset') ?? headers.get('x-ratelimit-reset'))
    error.resetTime =
      problem?.reset_time ??
      (resetSeconds !== undefined ? new Date(Date.now() + resetSeconds * 1000).toISOString() : undefined)
  }
  return error
}

export const malformed = (response: Response, why: string): ClientError => ({
  kind: 'validation',
  status: response.status,
  message: `malformed response from the service: ${why}`,
  requestId: response.headers.get('x-request-id') ?? undefined,
})
