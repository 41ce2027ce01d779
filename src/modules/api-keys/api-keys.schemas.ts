import { type Static, Type } from 'typebox'
import { PageOf, PageQuery } from '../../shared/pagination.js'

export const RoleEnum = Type.Enum(['read', 'write', 'admin'], {
  description: 'read: GET only; write: also create/update/delete records; admin: also API key management.',
})

export const ApiKey = Type.Object({
  id: Type.String({ examples: ['key_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
  name: Type.String(),
  role: RoleEnum,
  key_prefix: Type.String({
    description: 'The first characters of the secret, to recognise it.',
    examples: ['sk_4fQ9x2'],
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})
export type ApiKey = Static<typeof ApiKey>

export const ApiKeyCreated = Type.Object({
  ...ApiKey.properties,
  key: Type.Optional(
    Type.String({
      description: 'The secret. Shown once, never again: absent when the response is an Idempotency-Key replay.',
      examples: ['sk_4fQ9x2…'],
    }),
  ),
  secret_shown: Type.Boolean({
    description: 'true when `key` holds the secret; false on an Idempotency-Key replay, which never carries it.',
  }),
})
export type ApiKeyCreated = Static<typeof ApiKeyCreated>

export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['jira-intake'] }),
    role: RoleEnum,
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'jira-intake', role: 'write', expires_at: '2027-06-30T00:00:00Z' }],
  },
)
export type ApiKeyCreate = Static<typeof ApiKeyCreate>

export const ApiKeyListQuery = Type.Object(
  { ...PageQuery, include_revoked: Type.Optional(Type.Boolean({ default: false })) },
  { additionalProperties: false },
)
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>

export const ApiKeyPage = PageOf(ApiKey)
