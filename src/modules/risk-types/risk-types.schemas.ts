import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, Timestamps } from '../../shared/schemas.js'

const editable = {
  description: Type.Optional(Description({ examples: ['Outputs that disadvantage a protected group.'] })),
  custom: Type.Optional(
    Nullable(
      Type.Boolean({ description: 'Defined by this tenant rather than the starter library. `null` means true.' }),
    ),
  ),
  hidden: Type.Optional(Nullable(Type.Boolean({ description: 'Hidden from pickers. `null` means false.' }))),
}

export const RiskType = Type.Object({
  id: Id('rt'),
  name: Name,
  description: Nullable(Type.String()),
  custom: Type.Boolean(),
  hidden: Type.Boolean(),
  ...Timestamps,
})
export type RiskType = Static<typeof RiskType>

export const RiskTypeCreate = Type.Object(
  { name: Name, ...editable },
  {
    additionalProperties: false,
    examples: [{ name: 'Bias and fairness', description: 'Outputs that disadvantage a protected group.' }],
  },
)
export type RiskTypeCreate = Static<typeof RiskTypeCreate>

export const RiskTypeUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ hidden: true }] },
)
export type RiskTypeUpdate = Static<typeof RiskTypeUpdate>

export const RiskTypeListQuery = NamedListQuery({})
export type RiskTypeListQuery = Static<typeof RiskTypeListQuery>

export const RiskTypePage = PageOf(RiskType)
