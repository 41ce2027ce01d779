import fc from 'fast-check'

/** A JSON Schema as the OpenAPI document gives it (the subset TypeBox emits). */
export type JsonSchema = Record<string, any>

const MAX_ITEMS = 3
const MAX_STRING = 40

/** Values that satisfy `schema`: what a correct client could send. */
export function valueFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]))
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
  if (choices) return fc.oneof(...choices.map((s) => valueFor(s, depth)))
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return fc.integer({
        min: schema.minimum ?? -1000,
        max: schema.maximum ?? Math.max(1000, (schema.minimum ?? 0) + 1000),
      })
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      })
    case 'string':
      return stringFor(schema)
    case 'array': {
      const minLength = schema.minItems ?? 0
      const maxLength = Math.max(
        minLength,
        Math.min(schema.maxItems ?? MAX_ITEMS, minLength + (depth > 2 ? 0 : MAX_ITEMS)),
      )
      const items = valueFor(schema.items ?? {}, depth + 1)
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength })
    }
    case 'object':
      return objectFor(schema, depth)
    default:
      return fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null))
  }
}

function objectFor(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set<string>(schema.required ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, sub] of Object.entries(properties)) {
    // Deep optional structures are left out more often, to keep bodies small.
    if (!required.has(name) && depth > 3) continue
    model[name] = valueFor(sub, depth + 1)
  }
  return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) }) as fc.Arbitrary<
    Record<string, unknown>
  >
}

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING))
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity)
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString())
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10))
  }
  if (schema.pattern) {
    return fc
      .stringMatching(new RegExp(schema.pattern as string), { size: 'small' })
      .map((s) => s.slice(0, maxLength))
      .filter((s) => fits(s) && new RegExp(schema.pattern as string).test(s))
  }
  return fc.string({
    minLength,
    maxLength,
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-_.'.split('')) },
      { weight: 2, arbitrary: fc.constantFrom('é', 'ß', '中', '😀', ' ', '\u00a0') },
    ),
  })
}

/** Strings a careless or hostile client sends: control characters, lone surrogates, bidi overrides, emoji, NUL. */
export const oddUnicode = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  fc.string({
    unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 4,
  }),
  fc.constantFrom(
    '\u0000',
    '\u202eevil',
    'a\u200db',
    '\ufeff',
    '\u0301',
    '👩‍👩‍👧‍👦',
    'Ω≈ç√',
    '\r\n',
    '%00',
    '../../etc/passwd',
    "' or 1=1 --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, meant literally
    '${7*7}',
    '<script>x</script>',
  ),
)
