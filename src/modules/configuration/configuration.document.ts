import { isAlias, isNode, LineCounter, type Node, parseDocument, stringify, visit } from 'yaml'
import { AppError } from '../../http/errors.js'
import { compileJsonValidator, malformedText, valueTooDeep } from '../../http/plugins/validation.js'
import { API_VERSION, ConfigurationDocument } from './configuration.schemas.js'

/** One problem of a document: where (a JSON pointer, and in YAML its line and column) and what. */
export interface DocumentError {
  field: string
  pointer: string
  message: string
  line?: number
  column?: number
}

/** A parsed document and a way back from a JSON pointer to its place in the text. */
export interface ParsedDocument {
  value: unknown
  locate(pointer: string): { line: number; column: number } | undefined
}

/** YAML aliases a document may use: a few anchors are handy, thousands are a "billion laughs". */
const MAX_ALIASES = 100

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml']

export const documentErrors = (detail: string, errors: DocumentError[]) =>
  new AppError('validation_failed', detail, errors as unknown as { field: string; message: string }[])

const tokens = (pointer: string) =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'))

export const pointerOf = (...path: (string | number)[]) =>
  path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

/** Parses YAML text (JSON is YAML too), keeping where each value came from; syntax errors are 422 with their place. */
export function parseYaml(text: string): ParsedDocument {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, version: '1.2' })
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset)
    return { line, column: col }
  }
  if (doc.errors.length > 0) {
    throw documentErrors(
      `the document is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`,
      doc.errors.slice(0, 20).map((e) => ({
        field: '',
        pointer: '',
        message: e.message.split('\n')[0],
        ...at(e.pos[0]),
      })),
    )
  }
  // An alias inside the node it names would make the document infinite.
  const cycles: DocumentError[] = []
  let aliases = 0
  visit(doc, {
    Alias(_key, node, path) {
      aliases++
      const target = node.resolve(doc)
      if (target && path.includes(target as never)) {
        cycles.push({
          field: '',
          pointer: '',
          message: `alias *${node.source} refers to a node that contains it (a cycle)`,
          ...at(node.range?.[0] ?? 0),
        })
      }
    },
  })
  if (cycles.length > 0) throw documentErrors('the document contains a cycle', cycles)
  if (aliases > MAX_ALIASES) {
    throw documentErrors(`the document uses more than ${MAX_ALIASES} YAML aliases`, [
      { field: '', pointer: '', message: `more than ${MAX_ALIASES} aliases` },
    ])
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES })
  } catch (err) {
    throw documentErrors(`the document cannot be read: ${(err as Error).message}`, [
      { field: '', pointer: '', message: (err as Error).message },
    ])
  }
  return {
    value,
    locate(pointer) {
      const path = tokens(pointer)
      // The nearest node that exists: a missing field is reported where its object is.
      for (let n = path.length; n >= 0; n--) {
        const node = doc.getIn(
          path.slice(0, n).map((t) => (/^\d+$/.test(t) ? Number(t) : t)),
          true,
        ) as unknown
        const found = isAlias(node) ? node.resolve(doc) : node
        if (isNode(found) && (found as Node).range) return at((found as Node).range![0])
        if (n === 0 && doc.contents?.range) return at(doc.contents.range[0])
      }
      return undefined
    },
  }
}

/** A document that came as JSON (already parsed by the body parser): pointers only. */
export const parsedJson = (value: unknown): ParsedDocument => ({ value, locate: () => undefined })

const validateShape = compileJsonValidator<ConfigurationDocument>(ConfigurationDocument, 'document')

/** The errors with their places in the text, where it had any. */
export function placed(parsed: ParsedDocument, errors: { pointer: string; message: string }[]): DocumentError[] {
  return errors.map((e) => ({ field: e.pointer, pointer: e.pointer, message: e.message, ...parsed.locate(e.pointer) }))
}

/** The document checked against the published schema: 422 naming each error's pointer (and line/column in YAML). */
export function checkShape(parsed: ParsedDocument): ConfigurationDocument {
  const { value } = parsed
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw documentErrors(
      'the document must be an object with an apiVersion',
      placed(parsed, [{ pointer: '', message: 'must be an object' }]),
    )
  }
  if (valueTooDeep(value)) {
    throw documentErrors(
      'the document nests too deeply',
      placed(parsed, [{ pointer: '', message: 'nests too deeply' }]),
    )
  }
  const apiVersion = (value as { apiVersion?: unknown }).apiVersion
  if (apiVersion !== API_VERSION) {
    const message =
      apiVersion === undefined
        ? `is required (${API_VERSION})`
        : `unknown apiVersion ${JSON.stringify(apiVersion)}; this service reads ${API_VERSION}`
    throw documentErrors(`apiVersion ${message}`, placed(parsed, [{ pointer: '/apiVersion', message }]))
  }
  const malformed = malformedText(value)
  try {
    if (malformed.length > 0) throw new AppError('validation_failed', 'malformed text', malformed)
    return validateShape(value)
  } catch (err) {
    if (!(err instanceof AppError) || !err.errors) throw err
    const errors = placed(
      parsed,
      err.errors.map((e) => ({
        pointer: e.field === '(body)' ? '' : `/${e.field.replace(/^\//, '')}`,
        message: e.message,
      })),
    )
    throw documentErrors(
      `the document does not match the schema: ${errors
        .slice(0, 5)
        .map((e) => `${e.pointer || '/'} ${e.message}${e.line ? ` (line ${e.line}, column ${e.column})` : ''}`)
        .join('; ')}`,
      errors,
    )
  }
}

/** The canonical bytes: the same configuration always gives the same text. */
export const canonicalJson = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`
export const canonicalYaml = (doc: unknown) => stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })
