import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Id, Nullable, Text, Timestamps } from '../../shared/schemas.js'

const Email = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  examples: ['ada@example.com'],
})

const editable = {
  name: Type.Optional(Nullable(Text(200), { examples: ['Ada Lovelace'] })),
  title: Type.Optional(Nullable(Text(200), { examples: ['Head of model risk'] })),
  active: Type.Optional(
    Nullable(
      Type.Boolean({
        description:
          'Inactive users keep their history and ownerships; they cannot sign in, and their sessions end. `null` means true.',
      }),
    ),
  ),
  role: Type.Optional(
    Nullable(
      Type.Enum(['read', 'write', 'admin'], {
        description:
          "What the person may do when signed in, as for API keys (read: GET only; write: governance records; admin: also keys, sessions, users' roles). Only an admin sets it. `null` means read.",
      }),
    ),
  ),
}

export const User = Type.Object({
  id: Id('usr'),
  email: Type.String(),
  name: Nullable(Type.String()),
  title: Nullable(Type.String()),
  active: Type.Boolean(),
  role: Type.Enum(['read', 'write', 'admin']),
  ...Timestamps,
})
export type User = Static<typeof User>

export const UserCreate = Type.Object(
  { email: Email, ...editable },
  {
    additionalProperties: false,
    examples: [{ email: 'ada@example.com', name: 'Ada Lovelace', title: 'Head of model risk' }],
  },
)
export type UserCreate = Static<typeof UserCreate>

export const UserUpdate = Type.Object(
  { email: Type.Optional(Email), ...editable },
  { additionalProperties: false, examples: [{ active: false }] },
)
export type UserUpdate = Static<typeof UserUpdate>

export const UserListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['email', 'created_at', 'updated_at']),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name or email.' }),
    ),
    email: Type.Optional(Type.String({ maxLength: 320, description: 'Exact email, case-insensitive.' })),
    active: Type.Optional(Type.Boolean()),
    role: Type.Optional(Type.Enum(['read', 'write', 'admin'])),
  },
  { additionalProperties: false },
)
export type UserListQuery = Static<typeof UserListQuery>

export const UserPage = PageOf(User)
