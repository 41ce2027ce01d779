import { type Static, Type } from 'typebox'
import { PageOf, PageQuery } from '../../shared/pagination.js'
import { Id, Nullable } from '../../shared/schemas.js'

const Role = Type.Enum(['read', 'write', 'admin'])

export const Me = Type.Object(
  {
    tenant: Type.String(),
    role: Role,
    via: Type.Enum(['session', 'api_key', 'oauth'], {
      description:
        'session: a signed-in browser; api_key: a bearer token from an API key; oauth: an assistant for a person.',
    }),
    user: Nullable(Type.Object({ id: Id('usr'), email: Type.String(), name: Nullable(Type.String()) })),
    api_key: Nullable(Type.Object({ id: Id('key'), name: Nullable(Type.String()) })),
    csrf_token: Type.Optional(
      Type.String({
        description:
          'Sessions only: send it back as `X-CSRF-Token` on every write (with a same-origin `Origin`), else the write is 403.',
      }),
    ),
  },
  {
    examples: [
      {
        tenant: 'acme',
        role: 'write',
        via: 'session',
        user: { id: 'usr_01jd3k8m9v4q2w6e8r0t2y4u6i', email: 'ada@example.com', name: 'Ada Lovelace' },
        api_key: null,
        csrf_token: 'Vh2kQ0o1m3Yk9sXr7aP4tB6wC8dE0fG2hJ4kL6mN8pQ',
      },
    ],
  },
)
export type Me = Static<typeof Me>

export const Session = Type.Object({
  id: Id('ses'),
  user: Type.Object({ id: Id('usr'), email: Type.String(), name: Nullable(Type.String()) }),
  method: Type.Enum(['link', 'oidc'], { description: 'How the person signed in.' }),
  address: Nullable(Type.String({ description: 'The client address it signed in from.' })),
  user_agent: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  last_seen_at: Type.String({ format: 'date-time', description: 'The idle timeout counts from here (to the minute).' }),
  expires_at: Type.String({ format: 'date-time', description: 'The absolute end, SESSION_MAX_DAYS after sign-in.' }),
})
export type Session = Static<typeof Session>

export const SessionListQuery = Type.Object(
  { ...PageQuery, user_id: Type.Optional(Id('usr')) },
  { additionalProperties: false },
)
export type SessionListQuery = Static<typeof SessionListQuery>

export const SessionPage = PageOf(Session)
