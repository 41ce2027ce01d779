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
  if (typeof value === 'string') {
    if (!value.isWellFormed()) return [{ field: path || '(body)', message: 'must be well-formed Unicode (it contains a lone surrogate)' }]
    if (value.includes('\0')) return [{ field: path || '(body)', message: 'must not contain the NUL character (U+0000)' }]
    return []
  }
  if (value === null || typeof value !== 'object') return []
  const errors: FieldError[] = []
  for (const [key, member] of Object.entries(value)) {
    const field = path ? `${path}/${key}` : key
    errors.push(...(key.isWellFormed() && !key.includes('\0') ? malformedText(member, field) : [{ field: field.toWellFormed().replaceAll('\0', '\\0'), message: 'is not a valid field name (lone surrogate or U+0000)' }]))
  }
  return errors
}

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
    const malformed = malformedText(data)
    if (malformed.length > 0) throw malformedTextError(malformed)
    if (validate(data)) return data as T
    const errors = fieldErrors(validate.errors ?? [])
    throw new AppError('validation_failed', `invalid ${what}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors)
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
