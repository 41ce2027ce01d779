import { camelize, isPlainObject, snakify } from './case.js'
import { type ClientError, errorFromResponse, fail, malformed, ok, parseRetryAfter, type Result } from './errors.js'
import { type Body, type Data, OPERATIONS, type OperationId, type OperationSpec, type Query } from './operations.js'

export const API_PREFIX = '/api/v1/integration'
/** Lifetime assumed for a token whose exchange did not say (`expires_in` absent). */
const DEFAULT_TOKEN_LIFETIME_MS = 55 * 60_000
const RETRY_STATUSES = new Set([429, 502, 503, 504])

export interface CoreOptions {
  baseUrl: string
  apiKey?: string
  tenant?: string
  accessToken?: string
  timeoutMs: number
  maxRetries: number
  fetch: typeof fetch
  /** First backoff delay; it doubles on each retry, with jitter. */
  retryDelayMs: number
  /** Longest wait before a retry; a longer Retry-After gives the error back instead of waiting. */
  maxRetryDelayMs: number
  headers: Record<string, string>
  /** A browser session: cookies instead of a bearer token, X-CSRF-Token on writes. */
  session?: { csrfToken: () => string | undefined; credentials?: 'same-origin' | 'include' }
}

/** Options every call takes as its last argument. */
export interface CallOptions {
  signal?: AbortSignal
  /** Per attempt, including reading the body. Default: the client's `timeoutMs`. */
  timeoutMs?: number
  /** Default: the client's `maxRetries`. */
  maxRetries?: number
  /** For POSTs that create: replaces the random key the client generates (reuse it across your own retries). */
  idempotencyKey?: string
  headers?: Record<string, string>
}

export interface CallInput<K extends OperationId> {
  query?: Query<K>
  body?: Body<K>
  /** A body sent as is instead of JSON (multipart uploads); a stream is sent once, never retried. */
  raw?: { body: FormData | Blob | ReadableStream<Uint8Array>; contentType?: string }
  /** Answer the 2xx body as a byte stream, whatever the operation usually answers (a bundle instead of JSON). */
  stream?: true
}

type Sent = { response: Response; text: string; error?: undefined } | { error: ClientError; aborted: boolean }
type SentBody = string | FormData | Blob | ReadableStream<Uint8Array> | undefined

export interface Core {
  /** One call of one operation: token, retries, errors and case mapping. */
  invoke<K extends OperationId>(
    operationId: K,
    pathArgs: readonly string[],
    input?: CallInput<K>,
    options?: CallOptions,
  ): Promise<Result<Data<K>>>
  /** A fresh token exchange (shared with concurrent callers); the client uses the new token from then on. */
  exchangeToken(): Promise<Result<Data<'createToken'>>>
  /** An authenticated GET whose body the caller reads as it arrives (event streams): the open response, or the error. */
  openStream(
    path: string,
    query: unknown,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Result<Response>>
}

export function createCore(options: CoreOptions): Core {
  const baseUrl = options.baseUrl.replace(/\/+$/, '').replace(new RegExp(`${API_PREFIX}$`), '')
  let cached: { token: string; refreshAt: number } | undefined
  let exchanging: Promise<Result<Data<'createToken'>>> | undefined

  /**
   * A valid token: the supplied one, the cached one, or one shared exchange for every concurrent caller. Each caller
   * waits for the exchange until its own `deadline` or `signal`, whichever comes first; the exchange itself goes on
   * (bounded by the client's timeout) for the callers still waiting, and caches its token for the next ones.
   */
  async function currentToken(signal?: AbortSignal, deadline?: number): Promise<Result<string>> {
    if (options.accessToken !== undefined) return ok(options.accessToken)
    if (cached && Date.now() < cached.refreshAt) return ok(cached.token)
    const exchanged = await waitFor(exchangeToken(), signal, deadline)
    return exchanged.error ? exchanged : ok(exchanged.data.accessToken)
  }

  /** Exchanges the API key for a token and caches it; concurrent callers share one exchange. */
  function exchangeToken(): Promise<Result<Data<'createToken'>>> {
    exchanging ??= (async () => {
      if (!options.apiKey || !options.tenant) {
        return fail({
          kind: 'authentication',
          message:
            'no credentials: pass apiKey and tenant (or set SERVICE_API_KEY and SERVICE_TENANT), or an accessToken',
        })
      }
      const requestedAt = Date.now()
      const result = await invoke('createToken', [], {}, { headers: { 'x-api-key': options.apiKey } })
      if (result.error) return result
      const { accessToken, expiresIn } = result.data
      if (typeof accessToken !== 'string' || accessToken === '') {
        return fail({
          kind: 'validation',
          status: 200,
          message: 'malformed response from the service: the token exchange answered no access_token',
        })
      }
      const lifetime = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_TOKEN_LIFETIME_MS
      // Refresh a little before the end: 10% of the lifetime (at most a minute), and at least 1.5 s because
      // a JWT `exp` counts whole seconds from when the server issued it, up to 1 s earlier than it looks.
      cached = {
        token: accessToken,
        refreshAt: requestedAt + lifetime - Math.min(60_000, Math.max(lifetime / 10, 1_500)),
      }
      return result
    })().finally(() => {
      exchanging = undefined
    })
    return exchanging
  }

  async function invoke<K extends OperationId>(
    operationId: K,
    pathArgs: readonly string[],
    input: CallInput<K> = {},
    call: CallOptions = {},
  ): Promise<Result<Data<K>>> {
    const declared: OperationSpec | undefined = OPERATIONS[operationId]
    if (!declared) throw new TypeError(`unknown operationId ${String(operationId)}`)
    const spec: OperationSpec = input.stream ? { ...declared, response: 'stream' } : declared
    const url = baseUrl + (spec.root ? '' : API_PREFIX) + fillPath(spec.path, pathArgs) + queryString(input.query)
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      ...options.headers,
      ...call.headers,
    }
    if (options.tenant !== undefined && spec.path !== '/livez' && spec.path !== '/readyz')
      headers['x-tenant'] = options.tenant
    const body: SentBody = input.raw
      ? input.raw.body
      : input.body === undefined
        ? undefined
        : JSON.stringify(spec.keys === 'wire' ? input.body : snakify(input.body))
    if (input.raw?.contentType) headers['content-type'] = input.raw.contentType
    else if (typeof body === 'string') headers['content-type'] = 'application/json'
    if (spec.idempotencyKey) headers['idempotency-key'] = call.idempotencyKey ?? randomId()
    const oneShot = typeof ReadableStream !== 'undefined' && body instanceof ReadableStream
    const retriable =
      !oneShot &&
      (spec.method === 'GET' ||
        spec.method === 'PUT' ||
        spec.method === 'DELETE' ||
        spec.idempotencyKey ||
        spec.readOnly)
    const maxRetries = call.maxRetries ?? options.maxRetries
    let refreshed = false

    for (let attempt = 0; ; attempt++) {
      // The attempt's timeout covers the token it may wait for as well as the request.
      const deadline = Date.now() + (call.timeoutMs ?? options.timeoutMs)
      let bearer: string | undefined
      if (options.session) {
        const csrf = spec.method === 'GET' ? undefined : options.session.csrfToken()
        if (csrf !== undefined) headers['x-csrf-token'] = csrf
      } else if (!spec.public) {
        const token = await currentToken(call.signal, deadline)
        if (token.error) return token
        bearer = token.data
        headers.authorization = `Bearer ${bearer}`
      }
      const sent = await send(url, spec.method, headers, body, call, deadline, spec.response === 'stream')
      if (sent.error && sent.aborted) return fail(sent.error)

      // An exchanged token the service no longer accepts (expired early, key rotated): refresh once, retry once.
      if (
        !sent.error &&
        sent.response.status === 401 &&
        bearer !== undefined &&
        options.accessToken === undefined &&
        !refreshed &&
        !oneShot
      ) {
        refreshed = true
        if (cached?.token === bearer) cached = undefined
        attempt--
        continue
      }

      const transient = sent.error ? sent.error.kind === 'connection' : RETRY_STATUSES.has(sent.response.status)
      if (retriable && transient && attempt < maxRetries) {
        const delay = retryDelay(
          attempt,
          sent.error ? undefined : parseRetryAfter(sent.response.headers.get('retry-after')),
        )
        if (delay !== undefined) {
          if (!(await sleep(delay, call.signal))) return fail(abortedByCaller())
          continue
        }
      }
      return sent.error ? fail(sent.error) : (read(spec, sent.response, sent.text) as Result<Data<K>>)
    }
  }

  function retryDelay(attempt: number, retryAfterSeconds: number | undefined): number | undefined {
    const backoff = Math.min(options.retryDelayMs * 2 ** attempt, options.maxRetryDelayMs)
    const jittered = backoff / 2 + Math.random() * (backoff / 2)
    if (retryAfterSeconds === undefined) return jittered
    const wait = retryAfterSeconds * 1000
    return wait > options.maxRetryDelayMs ? undefined : Math.max(wait, jittered)
  }

  /**
   * One attempt, body included, bounded by the attempt's deadline and the caller's signal. `streamed`: a successful
   * answer's body is left for the caller to read (the timeout then covers only the headers).
   */
  async function send(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: SentBody,
    call: CallOptions,
    deadline: number,
    streamed = false,
  ): Promise<Sent> {
    if (call.signal?.aborted) return { error: abortedByCaller(), aborted: true }
    const controller = new AbortController()
    const timeoutMs = call.timeoutMs ?? options.timeoutMs
    let timedOut = false
    const timer = setTimeout(
      () => {
        timedOut = true
        controller.abort()
      },
      Math.max(0, deadline - Date.now()),
    )
    const onAbort = () => controller.abort()
    call.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      // A stream body needs half duplex in fetch (undici); the cast: lib.dom does not know the option yet.
      const init = {
        method,
        headers,
        body,
        signal: controller.signal,
        ...(options.session ? { credentials: options.session.credentials ?? 'same-origin' } : {}),
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit
      const response = await options.fetch(url, init)
      const text = streamed && response.ok ? '' : await response.text()
      return { response, text }
    } catch (err) {
      if (timedOut)
        return {
          error: { kind: 'timeout', message: `no complete answer from ${method} ${url} within ${timeoutMs} ms` },
          aborted: false,
        }
      if (call.signal?.aborted) return { error: abortedByCaller(), aborted: true }
      return { error: { kind: 'connection', message: `${method} ${url} failed: ${describe(err)}` }, aborted: false }
    } finally {
      clearTimeout(timer)
      call.signal?.removeEventListener('abort', onAbort)
    }
  }

  async function openStream(
    path: string,
    query: unknown,
    extra: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Result<Response>> {
    const url = baseUrl + API_PREFIX + path + queryString(query)
    for (let refreshed = false; ; refreshed = true) {
      const token: Result<string | undefined> = options.session ? ok(undefined) : await currentToken(signal)
      if (token.error) return token
      const headers: Record<string, string> = {
        accept: 'text/event-stream',
        ...options.headers,
        ...extra,
      }
      if (token.data !== undefined) headers.authorization = `Bearer ${token.data}`
      if (options.tenant !== undefined) headers['x-tenant'] = options.tenant
      let response: Response
      try {
        response = await options.fetch(url, {
          headers,
          signal,
          ...(options.session ? { credentials: options.session.credentials ?? 'same-origin' } : {}),
        })
      } catch (err) {
        if (signal?.aborted) return fail(abortedByCaller())
        return fail({ kind: 'connection', message: `GET ${url} failed: ${describe(err)}` })
      }
      if (response.ok) return ok(response)
      const text = await response.text()
      if (response.status === 401 && options.accessToken === undefined && !options.session && !refreshed) {
        if (cached?.token === token.data) cached = undefined
        continue
      }
      return fail(errorFromResponse(response, parseJson(response, text), text))
    }
  }

  return { invoke, exchangeToken, openStream }
}

/** The result of a finished exchange: an error, or the JSON/text/nothing the operation answers, camelCased. */
function read(spec: OperationSpec, response: Response, text: string): Result<unknown> {
  const json = parseJson(response, text)
  if (!response.ok) return fail(errorFromResponse(response, json, text))
  if (spec.response === 'empty') return ok(null)
  if (spec.response === 'text') return ok(text)
  if (spec.response === 'stream') return ok(response.body)
  if (json === undefined)
    return fail(malformed(response, `expected JSON, got ${response.headers.get('content-type') ?? 'no content type'}`))
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return fail(malformed(response, 'expected a JSON object'))
  if (spec.response === 'page') {
    const page = json as { items?: unknown; pagination?: unknown }
    if (!Array.isArray(page.items)) return fail(malformed(response, 'a list without `items`'))
    if (typeof page.pagination !== 'object' || page.pagination === null)
      return fail(malformed(response, 'a list without `pagination`'))
  }
  return ok(spec.keys === 'wire' ? json : camelize(json))
}

function parseJson(response: Response, text: string): unknown {
  if (!/json/i.test(response.headers.get('content-type') ?? '') || text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function fillPath(template: string, args: readonly string[]): string {
  let i = 0
  return template.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(args[i++] ?? '')))
}

function queryString(query: unknown): string {
  if (!isPlainObject(query)) return ''
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(snakify(query) as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) params.append(key, String(item))
    }
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/**
 * A shared result, waited for until `deadline` (epoch ms) or until `signal` aborts, whichever comes first; the work
 * itself is not cancelled (other callers may be waiting for it).
 */
function waitFor<T>(
  work: Promise<Result<T>>,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
): Promise<Result<T>> {
  if (signal?.aborted) return Promise.resolve(fail(abortedByCaller()))
  if (deadline === undefined && signal === undefined) return work
  return new Promise((resolve) => {
    const done = (result: Result<T>) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const onAbort = () => done(fail(abortedByCaller()))
    const waitMs = deadline === undefined ? undefined : Math.max(0, deadline - Date.now())
    const timer =
      waitMs === undefined
        ? undefined
        : setTimeout(
            () =>
              done(
                fail({
                  kind: 'timeout',
                  message: `no access token within the call's timeout (${waitMs} ms left): the token exchange has not answered`,
                }),
              ),
            waitMs,
          )
    signal?.addEventListener('abort', onAbort, { once: true })
    void work.then(done)
  })
}

/** Waits `ms`: true, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    const done = (value: boolean) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(value)
    }
    const onAbort = () => done(false)
    const timer = setTimeout(() => done(true), ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

const abortedByCaller = (): ClientError => ({
  kind: 'timeout',
  message: "the request was aborted by the caller's signal",
})

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`
  return err instanceof Error ? err.message : String(err)
}

function randomId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (crypto?.randomUUID) return crypto.randomUUID()
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    const r = (Math.random() * 16) | 0
    return (c === 'x' ? r : (r & 0x3) | 0x8).toString(16)
  })
}
