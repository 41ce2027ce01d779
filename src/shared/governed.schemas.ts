import { Type } from 'typebox'
import { Nullable } from './schemas.js'

/** Schemas of what governed records (use cases, models, vendors) carry: an owner and custom field values. */

export const OwnerType = Type.Enum(['user', 'team'])

export const OwnerRef = Type.Object(
  {
    owner_id: Type.String({ maxLength: 64, pattern: '^(usr|team)_', examples: ['usr_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
    owner_type: Type.Optional(OwnerType),
  },
  {
    additionalProperties: false,
    description: 'A user or team of the tenant; `owner_type` follows from the id when absent.',
  },
)

export const Owner = Type.Object({
  owner_id: Type.String(),
  owner_type: OwnerType,
  name: Type.String({ description: "The user's name (else email) or the team's name." }),
})

const Scalar = Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean()])
const FieldValue = Type.Union([Scalar, Type.Array(Scalar, { maxItems: 100 })])

export const CustomFieldValueInput = Type.Object(
  {
    custom_field_id: Type.String({ maxLength: 64, examples: ['cf_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
    value: Type.Union([FieldValue, Type.Null()], { description: 'A list for a `multiple` field; `null` clears.' }),
  },
  { additionalProperties: false },
)

export const CustomFieldValue = Type.Object({
  custom_field_id: Type.String(),
  name: Type.String(),
  value: FieldValue,
})

/** Body members of create and update. */
export const governedEditable = {
  owner: Type.Optional(Nullable(OwnerRef)),
  custom_fields: Type.Optional(
    Type.Array(CustomFieldValueInput, { maxItems: 100, description: 'Fields not named stay as they are.' }),
  ),
}

/** Members every read carries. */
export const governedRead = {
  owner: Nullable(Owner),
  custom_fields: Type.Array(CustomFieldValue),
}

/** List filters. */
export const governedFilters = {
  owner_id: Type.Optional(Type.String({ maxLength: 64, description: 'Records owned by this user or team.' })),
  custom_field_id: Type.Optional(
    Type.String({ maxLength: 64, description: 'With `custom_field_value`: records carrying that value.' }),
  ),
  custom_field_value: Type.Optional(
    Type.String({ maxLength: 500, description: 'Exact value (numbers, booleans and date-times compared by value).' }),
  ),
}
