import { type Static, Type } from 'typebox'

export const TokenRequest = Type.Object(
  {
    api_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'Alternative to the X-API-Key header.' }),
    ),
    tenant: Type.Optional(
      Type.String({ minLength: 1, maxLength: 63, description: 'Alternative to the X-Tenant header.' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Optional: credentials may come from the X-API-Key and X-Tenant headers instead, with no body.',
    examples: [{ api_key: 'sk_4fQ9x2…', tenant: 'default' }],
  },
)
export type TokenRequest = Static<typeof TokenRequest>

export const TokenResponse = Type.Object({
  access_token: Type.String({ examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…'] }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires.', examples: [3600] }),
})
export type TokenResponse = Static<typeof TokenResponse>
