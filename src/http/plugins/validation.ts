import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify'
import { AppError, type FieldError } from '../errors.js'
import { HTTP_URL_FORMAT, HTTP_URL_MESSAGE, isHttpUrl } from '../../shared/urls.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  // removeAdditional stays off so unknown fields are reported, never silently dropped.
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, strict: false })
  addFormats(ajv)
  ajv.addFormat(HTTP_URL_FORMAT, { type: 'string', validate: isHttpUrl })
  return ajv
}

/**
 * JSON bodies are validated exactly as sent (no type coercion: "12" is not a number);
 * query strings and path parameters are strings on the wire, so they are coerced.
 */
export function installValidators(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false)
  const urlAjv = makeAjv('array')
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : urlAjv
    // Compiled on first use, like the serializers: most routes are never called in a process's first second.
    let validate: ValidateFunction | undefined
    return (data: unknown) => {
      validate ??= ajv.compile(schema)
      return validate(data) ? true : { error: toValidationErrors(validate.errors ?? []) }
    }
  })
}

/**
 * Strings the database cannot store as sent are refused wherever they arrive: a lone UTF-16 surrogate would be
 * stored as U+FFFD (so the audit hash computed over the sent text no longer matches the stored one), and U+0000
 * truncates text in SQLite's functions and is refused by PostgreSQL. Runs on bodies, query strings and path
 * parameters of every API route (headers cannot carry either: Node refuses NUL and decodes them as Latin-1).
 */
export function installTextChecks(api: FastifyInstance): void {
  api.addHook('preValidation', (req, _reply, done) => {
    const errors = [...malformedText(req.params), ...malformedText(req.query), ...malformedText(req.body)]
    done(errors.length > 0 ? malformedTextError(errors) : undefined)
  })
}

/** Every string (and object key) under `value` that is not well-formed Unicode or contains U+0000, by field path. */
export function malformedText(value: unknown, path = ''): FieldError[] {
  const errors: FieldError[] = []
  // Iterative: a value nested deeper than the call stack (an MCP argument, a multipart field) is walked all the same.
  // A bad key is queued as its error, so the errors come out in the members' order as a recursive walk gives them.
  const pending: ([unknown, string] | FieldError)[] = [[value, path]]
  while (pending.length > 0) {
    const next = pending.pop()!
    if (!Array.isArray(next)) {
      errors.push(next)
      continue
    }
    const [member, at] = next
    if (typeof member === 'string') {
      if (!member.isWellFormed())
        errors.push({ field: at || '(body)', message: 'must be well-formed Unicode (it contains a lone surrogate)' })
      else if (member.includes('\0'))
        errors.push({ field: at || '(body)', message: 'must not contain the NUL character (U+0000)' })
      continue
    }
    if (member === null || typeof member !== 'object') continue
    const entries = Object.entries(member)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]
      const field = at ? `${at}/${key}` : key
      pending.push(
        key.isWellFormed() && !key.includes('\0')
          ? [child, field]
          : {
              field: field.toWellFormed().replaceAll('\0', '\\0'),
              message: 'is not a valid field name (lone surrogate or U+0000)',
            },
      )
    }
  }
  return errors
}

/** How deep a JSON body may nest: no real client comes near it, and every walk below it stays far from the stack's end. */
export const MAX_JSON_DEPTH = 64

/** Whether JSON text nests arrays and objects deeper than `limit`, read in one pass before anything parses or walks it. */
export function jsonTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** The same limit on a value already parsed (MCP tool arguments), walked without recursion. */
export function valueTooDeep(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const pending: [unknown, number][] = [[value, 0]]
  while (pending.length > 0) {
    const [member, depth] = pending.pop()!
    if (member === null || typeof member !== 'object') continue
    if (depth + 1 > limit) return true
    for (const child of Object.values(member)) pending.push([child, depth + 1])
  }
  return false
}

export const tooDeepError = (what = 'the request body') =>
  new AppError('bad_request', `${what} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, [
    { field: '(body)', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
  ])

const malformedTextError = (errors: FieldError[]) =>
  new AppError('validation_failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), errors)

let jsonAjv: Ajv | undefined

/**
 * Validates JSON that arrives outside an HTTP body (MCP tool arguments) exactly as a request body is:
 * the same options, the same field messages; failure is a 422 AppError naming the fields.
 */
export function compileJsonValidator<T>(schema: object, what = 'arguments'): (data: unknown) => T {
  jsonAjv ??= makeAjv(false)
  const validate = jsonAjv.compile(schema)
  return (data: unknown) => {
    if (valueTooDeep(data)) throw tooDeepError(`the ${what}`)
    const malformed = malformedText(data)
    if (malformed.length > 0) throw malformedTextError(malformed)
    if (validate(data)) return data as T
    const errors = fieldErrors(validate.errors ?? [])
    throw new AppError(
      'validation_failed',
      `invalid ${what}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      errors,
    )
  }
}

function toValidationErrors(errors: ErrorObject[]): Error {
  const err = new Error('validation failed') as Error & { validation: FastifySchemaValidationError[] }
  err.validation = errors as unknown as FastifySchemaValidationError[]
  return err
}

/** One message per field: "name" / "regions/0", with unknown fields named as such. */
export function fieldErrors(errors: ErrorObject[]): { field: string; message: string }[] {
  const out = new Map<string, string>()
  const alternatives = new Set<string>()
  for (const e of errors) {
    const path = e.instancePath.replace(/^\//, '')
    if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty)
      const field = path ? `${path}/${extra}` : extra
      out.set(field, 'unknown field')
      continue
    }
    if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty: string }).missingProperty)
      out.set(path ? `${path}/${missing}` : missing, 'is required')
      continue
    }
    const field = path || '(body)'
    // A nullable field fails both branches of its anyOf; report the concrete branch, not the union.
    if (e.keyword === 'anyOf') continue
    if (e.keyword === 'type' && (e.params as { type: string }).type === 'null') {
      alternatives.add(field)
      continue
    }
    if (!out.has(field)) out.set(field, describe(e))
  }
  for (const field of alternatives) if (!out.has(field)) out.set(field, 'has the wrong type')
  return [...out].map(([field, message]) => ({ field, message }))
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'type':
      return `must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${p.type}`
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`
    case 'format':
      return p.format === HTTP_URL_FORMAT ? HTTP_URL_MESSAGE : `must be a valid ${p.format}`
    default:
      return e.message ?? 'is invalid'
  }
}
