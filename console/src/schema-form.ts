// Record forms derived from the service's OpenAPI document: which fields a create or an update takes, their
// lengths, enums and whether they may be emptied; the PATCH body of what the person changed; and a refusal's
// errors[] placed next to the field each names.

type Json = Record<string, unknown>

export interface FieldSpec {
  /** The wire name (snake_case), as the schema and errors[] name it. */
  name: string
  kind: 'text' | 'longtext' | 'url' | 'enum' | 'list' | 'owner'
  /** Must have a value: required on create, or not nullable (cannot be emptied) on update. */
  required: boolean
  minLength?: number
  maxLength?: number
  pattern?: string
  enumValues?: string[]
  /** The enum's component name (RiskCategoryLevel, ModelStatus …), for its plain-language labels. */
  enumName?: string
  maxItems?: number
  itemMaxLength?: number
}

/** Fields the console does not offer in a record form: set elsewhere on the page, or by the service. */
const SKIPPED = new Set(['questionnaire_ids', 'questions', 'creator_id', 'custom_fields'])
/** Texts longer than this get a multi-line box. */
const LONG_TEXT = 1000

function resolve(doc: Json, schema: Json | undefined): { schema: Json; ref?: string } {
  const ref = typeof schema?.$ref === 'string' ? schema.$ref : undefined
  if (!ref) return { schema: schema ?? {} }
  const name = ref.replace('#/components/schemas/', '')
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>
  return { schema: schemas[name] ?? {}, ref: name }
}

/** The schema without its `null` alternative, and whether null was allowed. */
function unwrapNullable(doc: Json, schema: Json): { schema: Json; ref?: string; nullable: boolean } {
  const options = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]) : undefined
  if (options) {
    const rest = options.filter((o) => o.type !== 'null')
    const inner = resolve(doc, rest[0])
    return { ...inner, nullable: rest.length < options.length }
  }
  return { ...resolve(doc, schema), nullable: false }
}

/**
 * The form fields of a request body schema (`UseCaseUpdate`, `VendorCreate` …) in the document's order. With
 * `createSchema`, a field is also required when the create schema requires it (the name of an update).
 */
export function fieldSpecs(doc: Json, schemaName: string, createSchema?: string): FieldSpec[] {
  const { schema } = resolve(doc, { $ref: `#/components/schemas/${schemaName}` })
  const required = new Set<string>((schema.required as string[] | undefined) ?? [])
  const createRequired = new Set<string>(
    createSchema
      ? ((resolve(doc, { $ref: `#/components/schemas/${createSchema}` }).schema.required as string[] | undefined) ?? [])
      : [],
  )
  const properties = (schema.properties ?? {}) as Record<string, Json>
  const out: FieldSpec[] = []
  for (const [name, raw] of Object.entries(properties)) {
    if (SKIPPED.has(name)) continue
    const { schema: s, ref, nullable } = unwrapNullable(doc, raw)
    const base = { name, required: required.has(name) || (createRequired.has(name) && !nullable) }
    if (ref === 'OwnerRef') out.push({ ...base, kind: 'owner' })
    else if (Array.isArray(s.enum)) out.push({ ...base, kind: 'enum', enumValues: s.enum as string[], enumName: ref })
    else if (s.type === 'array') {
      const items = resolve(doc, s.items as Json).schema
      out.push({
        ...base,
        kind: 'list',
        maxItems: s.maxItems as number | undefined,
        itemMaxLength: items.maxLength as number | undefined,
      })
    } else if (s.type === 'string') {
      const maxLength = s.maxLength as number | undefined
      out.push({
        ...base,
        kind: s.format === 'http-url' ? 'url' : maxLength !== undefined && maxLength > LONG_TEXT ? 'longtext' : 'text',
        minLength: s.minLength as number | undefined,
        maxLength,
        pattern: s.pattern as string | undefined,
      })
    }
  }
  return out
}

export type FormValue = string | string[] | null

/** What the person must fix before the form is sent (the service checks again; this saves a round trip). */
export function checkValue(spec: FieldSpec, value: FormValue): string | undefined {
  const empty = value === null || value === '' || (Array.isArray(value) && value.length === 0)
  if (empty) return spec.required ? 'Fill this in' : undefined
  if (Array.isArray(value)) {
    if (spec.maxItems !== undefined && value.length > spec.maxItems) return `At most ${spec.maxItems} entries`
    const long = value.find((v) => spec.itemMaxLength !== undefined && v.length > spec.itemMaxLength)
    return long === undefined ? undefined : `“${long.slice(0, 20)}…” is longer than ${spec.itemMaxLength} characters`
  }
  if (spec.maxLength !== undefined && value.length > spec.maxLength)
    return `At most ${spec.maxLength} characters (now ${value.length})`
  if (spec.minLength !== undefined && value.length < spec.minLength) return `At least ${spec.minLength} characters`
  if (spec.pattern && spec.kind !== 'url') {
    let re: RegExp | undefined
    try {
      re = new RegExp(spec.pattern, 'u')
    } catch {
      re = undefined
    }
    if (re && !re.test(value)) return 'Not a valid value (it may not be only spaces or hold control characters)'
  }
  if (spec.kind === 'url' && !/^https?:\/\/[^\s/]+/i.test(value)) return 'An address starting with http:// or https://'
  if (spec.kind === 'enum' && spec.enumValues && !spec.enumValues.includes(value)) return 'Pick one of the choices'
  return undefined
}

export function checkAll(specs: FieldSpec[], values: Record<string, FormValue>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const spec of specs) {
    const problem = checkValue(spec, values[spec.name] ?? null)
    if (problem) out[spec.name] = problem
  }
  return out
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/** A record as the client gives it (camelCase) → the form's values by wire name. */
export function formValues(specs: FieldSpec[], record: Json | undefined): Record<string, FormValue> {
  const out: Record<string, FormValue> = {}
  for (const spec of specs) {
    const v = record?.[camel(spec.name)]
    if (spec.kind === 'owner') out[spec.name] = ((v as Json | null | undefined)?.ownerId as string | undefined) ?? null
    else if (spec.kind === 'list') out[spec.name] = Array.isArray(v) ? (v as string[]) : []
    else out[spec.name] = typeof v === 'string' ? v : null
  }
  return out
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
const normal = (v: FormValue | undefined): FormValue =>
  v === '' || v === undefined || (Array.isArray(v) && v.length === 0) ? null : v

/** The fields whose values differ between two sets of values (what the person changed, or what someone else did). */
export function changedFields(
  specs: FieldSpec[],
  before: Record<string, FormValue>,
  after: Record<string, FormValue>,
): string[] {
  return specs.filter((s) => !same(normal(before[s.name]), normal(after[s.name]))).map((s) => s.name)
}

/**
 * The body of a PATCH (camelCase for the client): only what the person changed, emptied fields as null, custom
 * fields only those changed. On create (`original` empty) every filled field.
 */
export function patchBody(
  specs: FieldSpec[],
  original: Record<string, FormValue>,
  values: Record<string, FormValue>,
  customOriginal: Record<string, unknown>,
  custom: Record<string, unknown>,
): { body: Json; customSent: string[] } {
  const body: Json = {}
  for (const name of changedFields(specs, original, values)) {
    const spec = specs.find((s) => s.name === name)!
    const v = normal(values[name])
    if (spec.kind === 'owner') body.owner = v === null ? null : { ownerId: v }
    else body[camel(name)] = v
  }
  const customSent = Object.keys(custom).filter((id) => !same(emptyToNull(custom[id]), emptyToNull(customOriginal[id])))
  if (customSent.length)
    body.customFields = customSent.map((customFieldId) => ({
      customFieldId,
      value: emptyToNull(custom[customFieldId]),
    }))
  return { body, customSent }
}

const emptyToNull = (v: unknown) =>
  v === undefined || v === '' || (Array.isArray(v) && v.length === 0) ? null : (v as unknown)

/**
 * errors[] of a problem by form field: `regions/0` → `regions`, `owner/owner_id` → `owner`,
 * `custom_fields/2/value` → `cf:<the id sent third>`; what names no field of the form is returned as `general`.
 */
export function errorsByField(
  errors: { field?: string | null; message?: string | null }[],
  specs: FieldSpec[],
  customSent: string[],
): { byField: Record<string, string>; general: string[] } {
  const byField: Record<string, string> = {}
  const general: string[] = []
  const names = new Set(specs.map((s) => s.name))
  for (const e of errors) {
    const path = (e.field ?? '').replace(/^\/?(body\/)?/, '').replace(/^\//, '')
    const message = e.message ?? 'not valid'
    const custom = /^custom_fields\/(\d+)/.exec(path)
    const top = path.split('/')[0] ?? ''
    if (custom && customSent[Number(custom[1])]) byField[`cf:${customSent[Number(custom[1])]}`] = message
    else if (names.has(top)) byField[top] = byField[top] ? `${byField[top]}; ${message}` : message
    else general.push(path ? `${path}: ${message}` : message)
  }
  return { byField, general }
}

/** A custom field's values of a record, by the field's id. */
export function customValues(record: Json | undefined): Record<string, unknown> {
  const list = (record?.customFields ?? []) as { customFieldId: string; value: unknown }[]
  return Object.fromEntries(list.map((f) => [f.customFieldId, f.value]))
}

let openapiDocument: Promise<Json> | undefined
/** The service's OpenAPI document, fetched once per page load (it is public, and served by the same origin). */
export function loadDocument(): Promise<Json> {
  openapiDocument ??= fetch('/openapi.json', { credentials: 'same-origin' }).then((r) => {
    if (!r.ok) throw new Error(`the service's API description could not be read (${r.status})`)
    return r.json() as Promise<Json>
  })
  openapiDocument.catch(() => {
    openapiDocument = undefined
  })
  return openapiDocument
}
