import { type TSchema, Type } from 'typebox'
import { HTTP_URL_FORMAT } from './urls.js'

/** Building blocks shared by every family's schemas. */

export const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Union([schema, Type.Null()], options)

export const Text = (maxLength: number) => Type.String({ maxLength })

/** A URL a client sends (see shared/urls.ts): http:// or https:// with a host, checked by the `http-url` format. */
export const HttpUrl = (maxLength: number, options: { description?: string; examples?: string[] } = {}) =>
  Type.String({
    minLength: 1,
    maxLength,
    format: HTTP_URL_FORMAT,
    ...options,
    description: options.description ?? 'An http:// or https:// URL.',
  })

/**
 * Up to 512: intake systems prefix ticket keys to summaries of up to 255 characters. Some visible character and
 * no control characters (tab, newline, escape, …): names end up in lists, logs and CSV.
 */
export const Name = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^[^\\S\\p{Cc}]*[^\\s\\p{Cc}]\\P{Cc}*$',
  examples: ['Credit scoring'],
})

/** A record's long text (description, summary): up to 100 000 characters. */
export const Description = (options: Record<string, unknown> = {}) => Nullable(Text(100_000), options)

export const StringList = (maxItems: number, maxLength: number) =>
  Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems })

export const Id = (prefix: string) =>
  Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$`, examples: [`${prefix}_01jd3k8m9v4q2w6e8r0t2y4u6i`] })

export const IdParam = (prefix: string) =>
  Type.Object({ id: Type.String({ maxLength: 64, description: `The ${prefix}_… id.` }) })

export const Timestamps = {
  created_at: Type.String({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] }),
  updated_at: Type.String({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] }),
}

export function parseJsonList(text: string): string[] {
  return JSON.parse(text) as string[]
}

/** For routes that take no query parameters: an unknown one is a 400, as on lists. */
export const NoQuery = Type.Object({}, { additionalProperties: false })
/** A record key (policy controls, packs, questionnaires): stable, human-chosen, unique per tenant. */
export const Key = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  examples: ['EU-AIA-ART9'],
})

export const KeyParam = (what: string) =>
  Type.Object({ key: Type.String({ maxLength: 100, description: `The ${what} key.` }) })

/** `?version=` on a get by key: that version, else the latest. */
export const VersionQuery = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1, description: 'A version number; the latest when absent.' })) },
  { additionalProperties: false },
)
