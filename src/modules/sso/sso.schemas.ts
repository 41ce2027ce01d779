import { type Static, Type } from 'typebox'

const Domain = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$',
  description: 'A mail domain, e.g. example.com (no @, no wildcard).',
})

export const SsoConfigInput = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: 512,
      description:
        "The identity provider's issuer URL (its discovery document is at <issuer>/.well-known/openid-configuration). https, or http on a loopback address only.",
      examples: ['https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0'],
    }),
    client_id: Type.String({ minLength: 1, maxLength: 256 }),
    client_secret: Type.String({ minLength: 1, maxLength: 1024, description: 'Stored encrypted; never returned.' }),
    email_domains: Type.Optional(
      Type.Array(Domain, {
        maxItems: 50,
        uniqueItems: true,
        description:
          'When set, only verified emails of these domains sign in through this provider (existing users included).',
      }),
    ),
    provision: Type.Optional(
      Type.Boolean({
        description:
          'Create a `read` user for an unknown verified email of `email_domains` at their first sign-in (default false: only existing users sign in).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type SsoConfigInput = Static<typeof SsoConfigInput>

export const SsoConfig = Type.Object(
  {
    issuer: Type.String({ description: 'As the discovery document names it.' }),
    client_id: Type.String(),
    client_secret_set: Type.Boolean({ description: 'Whether a client secret is stored (it is never returned).' }),
    email_domains: Type.Array(Type.String()),
    provision: Type.Boolean(),
    redirect_uri: Type.String({
      description: 'What to register at the identity provider as the redirect (reply) URI.',
    }),
    sign_in_url: Type.String({ description: "Where the tenant's people start signing in." }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        issuer: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
        client_id: '6731de76-14a6-49ae-97bc-6eba6914391e',
        client_secret_set: true,
        email_domains: ['example.com'],
        provision: false,
        redirect_uri: 'https://governance.example.com/auth/oidc/callback',
        sign_in_url: 'https://governance.example.com/auth/oidc/start?tenant=acme',
        created_at: '2026-12-02T10:00:00.000Z',
        updated_at: '2026-12-02T10:00:00.000Z',
      },
    ],
  },
)
export type SsoConfig = Static<typeof SsoConfig>
