import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Key, Name, Nullable, Timestamps } from '../../shared/schemas.js'

export const PolicyPackControl = Type.Object({
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  control_version_id: Id('pcv'),
  name: Name,
})
export type PolicyPackControl = Static<typeof PolicyPackControl>

export const PolicyPack = Type.Object({
  id: Id('pp'),
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  latest: Type.Boolean({ description: 'True on the newest version of this key.' }),
  name: Name,
  description: Type.Union([Type.String(), Type.Null()]),
  controls: Type.Array(PolicyPackControl),
  ...Timestamps,
})
export type PolicyPack = Static<typeof PolicyPack>

export const PolicyPackCreate = Type.Object(
  {
    key: Key,
    name: Name,
    description: Type.Optional(Description()),
    controls: Type.Array(
      Type.Object(
        {
          key: Key,
          version: Type.Optional(
            Nullable(
              Type.Integer({ minimum: 1, description: 'A published version; the latest published when absent.' }),
            ),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
  },
  {
    additionalProperties: false,
    description:
      'Publishes the next version (previous + 1) of the pack with this key. Every control must have a published version.',
    examples: [
      {
        key: 'MODEL-RISK',
        name: 'Model risk essentials',
        controls: [{ key: 'HUMAN-OVERSIGHT' }, { key: 'LOGGING', version: 2 }],
      },
    ],
  },
)
export type PolicyPackCreate = Static<typeof PolicyPackCreate>

export const PolicyPackListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['key', 'name', 'created_at']),
    all_versions: Type.Optional(
      Type.Boolean({ default: false, description: 'Every version, not only the latest of each key.' }),
    ),
    key: Type.Optional(Key),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
    ),
  },
  { additionalProperties: false },
)
export type PolicyPackListQuery = Static<typeof PolicyPackListQuery>

export const PolicyPackPage = PageOf(PolicyPack)
