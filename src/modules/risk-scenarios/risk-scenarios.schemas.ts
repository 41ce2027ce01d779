import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, StringList, Timestamps } from '../../shared/schemas.js'

const editable = {
  description: Type.Optional(Description({ examples: ['A credit model systematically scores one group lower.'] })),
  risk_type_ids: Type.Optional(
    Nullable(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 100,
        description: 'Ids of risk types of this tenant; each must exist.',
      }),
      { examples: [['rt_01jd3k8m9v4q2w6e8r0t2y4u6i']] },
    ),
  ),
  domains: Type.Optional(Nullable(StringList(50, 100), { examples: [['lending']] })),
  industries: Type.Optional(Nullable(StringList(50, 100), { examples: [['financial_services']] })),
  regions: Type.Optional(Nullable(StringList(50, 100), { examples: [['EU']] })),
  archived: Type.Optional(Nullable(Type.Boolean({ description: '`null` means false.' }))),
}

export const RiskScenario = Type.Object({
  id: Id('rs'),
  name: Name,
  description: Nullable(Type.String()),
  risk_type_ids: Type.Array(Type.String(), { description: 'In id (creation) order.' }),
  domains: Type.Array(Type.String()),
  industries: Type.Array(Type.String()),
  regions: Type.Array(Type.String()),
  archived: Type.Boolean(),
  ...Timestamps,
})
export type RiskScenario = Static<typeof RiskScenario>

export const RiskScenarioCreate = Type.Object(
  { name: Name, ...editable },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Discriminatory credit decisions',
        description: 'Scores one group systematically lower.',
        domains: ['lending'],
        regions: ['EU'],
      },
    ],
  },
)
export type RiskScenarioCreate = Static<typeof RiskScenarioCreate>

export const RiskScenarioUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ archived: true }] },
)
export type RiskScenarioUpdate = Static<typeof RiskScenarioUpdate>

export const RiskScenarioListQuery = NamedListQuery({
  risk_type_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only scenarios of this risk type.' })),
  archived: Type.Optional(Type.Boolean()),
})
export type RiskScenarioListQuery = Static<typeof RiskScenarioListQuery>

export const RiskScenarioPage = PageOf(RiskScenario)
