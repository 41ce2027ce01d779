import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, Timestamps } from '../../shared/schemas.js'

export const CustomFieldType = Type.Enum(['string', 'number', 'boolean', 'datetime', 'user'])
export const ElementType = Type.Enum(['input', 'checkbox', 'select', 'datepicker'])
export const EntityType = Type.Enum(['use_case', 'model', 'vendor'])

const Options = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
  maxItems: 500,
  uniqueItems: true,
  description: 'The choices of a `select` field.',
})
const EntityTypes = Type.Array(EntityType, {
  uniqueItems: true,
  description: 'The records the field is for; empty means all.',
})

/** Largest `metadata`, as JSON text in UTF-8. */
export const MAX_METADATA_BYTES = 16 * 1024
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Any JSON object the client keeps with the definition (at most ${MAX_METADATA_BYTES / 1024} KB as JSON), returned as sent. A string \`description\` in it fills \`description\` when the body has none.`,
  examples: [{ description: 'The Azure resource id an inventory sync matches on.', source: 'azure-foundry-sync' }],
})

const editable = {
  description: Type.Optional(Description({ examples: ['The Azure resource id an inventory sync matches on.'] })),
  element_type: Type.Optional(
    Nullable(ElementType, {
      description:
        'How a form shows the field; `null` means the default for the type (select for users, checkbox for booleans, datepicker for date-times, else input).',
    }),
  ),
  options: Type.Optional(Nullable(Options)),
  required: Type.Optional(
    Nullable(Type.Boolean({ description: 'Records must carry a value from creation on. `null` means false.' })),
  ),
  entity_types: Type.Optional(Nullable(EntityTypes)),
  entity_type_ids: Type.Optional(
    Nullable(
      Type.Array(EntityType, {
        uniqueItems: true,
        description:
          'Another name for `entity_types` (the original SDK sends this one); if both are sent they must agree.',
      }),
    ),
  ),
  archived: Type.Optional(
    Nullable(
      Type.Boolean({ description: 'Archived fields keep their values but take no new ones. `null` means false.' }),
    ),
  ),
  metadata: Type.Optional(Nullable(Metadata)),
}

export const CustomField = Type.Object({
  id: Id('cf'),
  name: Name,
  description: Nullable(Type.String()),
  type: CustomFieldType,
  element_type: ElementType,
  options: Type.Array(Type.String()),
  multiple: Type.Boolean(),
  required: Type.Boolean(),
  entity_types: Type.Array(EntityType),
  archived: Type.Boolean(),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown()), {
    description: 'The object the client stored with the definition, or null.',
  }),
  ...Timestamps,
})
export type CustomField = Static<typeof CustomField>

export const CustomFieldCreate = Type.Object(
  {
    name: Name,
    type: Type.Optional(Nullable(CustomFieldType, { description: '`null` means string.' })),
    multiple: Type.Optional(Nullable(Type.Boolean({ description: 'Values are lists. `null` means false.' }))),
    ...editable,
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Business unit',
        type: 'string',
        element_type: 'select',
        options: ['Retail', 'Corporate'],
        required: true,
      },
    ],
  },
)
export type CustomFieldCreate = Static<typeof CustomFieldCreate>

export const CustomFieldUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.Optional(Nullable(CustomFieldType, { description: 'Only while no record carries a value.' })),
    multiple: Type.Optional(Nullable(Type.Boolean({ description: 'Only while no record carries a value.' }))),
    ...editable,
  },
  { additionalProperties: false, examples: [{ archived: true }] },
)
export type CustomFieldUpdate = Static<typeof CustomFieldUpdate>

export const CustomFieldListQuery = NamedListQuery({
  entity_type: Type.Optional(EntityType),
  archived: Type.Optional(Type.Boolean()),
})
export type CustomFieldListQuery = Static<typeof CustomFieldListQuery>

export const CustomFieldPage = PageOf(CustomField)
