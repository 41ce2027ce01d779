import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { governedEditable, governedFilters, governedRead } from '../../shared/governed.schemas.js'
import { Description, Id, Name, Nullable, Text, Timestamps } from '../../shared/schemas.js'

export const ModelStatus = Type.Enum(['none', 'in_development', 'in_production', 'retired'])

const editable = {
  summary: Type.Optional(Description({ examples: ['Gradient-boosted trees over bureau and application data.'] })),
  source: Type.Optional(Nullable(Text(200), { examples: ['sagemaker'] })),
  status: Type.Optional(Nullable(ModelStatus, { description: '`null` means `none`.' })),
  provider: Type.Optional(Nullable(Text(200), { examples: ['in-house'] })),
  model_type: Type.Optional(Nullable(Text(100), { examples: ['classification'] })),
  version: Type.Optional(Nullable(Text(100), { examples: ['3.2.0'] })),
  ...governedEditable,
}

export const Model = Type.Object({
  id: Id('mdl'),
  name: Name,
  summary: Nullable(Type.String()),
  source: Nullable(Type.String()),
  status: ModelStatus,
  provider: Nullable(Type.String()),
  model_type: Nullable(Type.String()),
  version: Nullable(Type.String()),
  ...governedRead,
  ...Timestamps,
})
export type Model = Static<typeof Model>

export const ModelCreate = Type.Object(
  { name: Name, ...editable },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Credit risk GBM',
        summary: 'Scores retail credit applications.',
        status: 'in_production',
        provider: 'in-house',
        version: '3.2.0',
      },
    ],
  },
)
export type ModelCreate = Static<typeof ModelCreate>

export const ModelUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ status: 'retired', version: null }] },
)
export type ModelUpdate = Static<typeof ModelUpdate>

export const ModelListQuery = NamedListQuery({
  status: Type.Optional(ModelStatus),
  ...governedFilters,
})
export type ModelListQuery = Static<typeof ModelListQuery>

export const ModelPage = PageOf(Model)
