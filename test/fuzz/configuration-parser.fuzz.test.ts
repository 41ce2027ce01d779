import fc from 'fast-check'
import { stringify } from 'yaml'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/http/errors.js'
import { checkShape, parseYaml } from '../../src/modules/configuration/configuration.document.js'

/** Whatever the text, the parser answers a document or a 422 naming where: never another error, never a hang. */
const readsOrRefuses = (text: string) => {
  try {
    checkShape(parseYaml(text))
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).status).toBe(422)
    for (const e of (err as AppError).errors ?? []) expect(typeof (e as { pointer?: unknown }).pointer).toBe('string')
  }
}

describe('configuration document parser (fuzz)', () => {
  it('answers arbitrary text with a document or a 422', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), readsOrRefuses), { numRuns: 500 })
  })

  it('answers arbitrary YAML values and near-documents with a document or a 422', () => {
    const value = fc.jsonValue({ maxDepth: 4 })
    const nearDocument = fc.record({
      apiVersion: fc.constantFrom('aigov/v1', 'aigov/v2', 1),
      risk_types: fc.array(fc.record({ name: fc.string(), description: fc.option(fc.string()) }), { maxLength: 5 }),
      teams: fc.array(fc.record({ name: fc.string(), members: fc.array(fc.string(), { maxLength: 3 }) }), {
        maxLength: 3,
      }),
      extra: value,
    })
    fc.assert(
      fc.property(fc.oneof(value, nearDocument), (v) => readsOrRefuses(stringify(v))),
      { numRuns: 300 },
    )
  })

  it('refuses alias bombs and self-referential aliases', () => {
    const bomb = ['apiVersion: aigov/v1', 'a: &a [x, x, x, x, x, x, x, x, x, x]']
    for (let i = 0; i < 12; i++)
      bomb.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      )
    expect(() => parseYaml(bomb.join('\n'))).toThrow(AppError)
    expect(() => parseYaml('a: &a\n  b: *a\n')).toThrow(/cycle/)
  })
})
