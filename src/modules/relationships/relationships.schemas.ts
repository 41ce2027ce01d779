import { type Static, Type } from 'typebox'
import { PageOf, PageQuery } from '../../shared/pagination.js'
import { Nullable } from '../../shared/schemas.js'
import { RiskScenario } from '../risk-scenarios/risk-scenarios.schemas.js'

/** Lists of linked records take only pagination; they are ordered by the linked record's id (creation order). */
export const LinkListQuery = Type.Object(PageQuery, { additionalProperties: false })
export type LinkListQuery = Static<typeof LinkListQuery>

export const LinkBody = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64, description: 'The id of the record to link.' }) },
  { additionalProperties: false, examples: [{ id: 'mdl_01jd3k8m9v4q2w6e8r0t2y4u6i' }] },
)
export type LinkBody = Static<typeof LinkBody>

const Score = (what: string) =>
  Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 5, description: `${what}, 1 (lowest) to 5 (highest).` })))

export const RiskScenarioLinkBody = Type.Object(
  {
    risk_scenario_id: Type.String({ minLength: 1, maxLength: 64 }),
    likelihood: Score('Likelihood'),
    impact: Score('Impact'),
  },
  {
    additionalProperties: false,
    examples: [{ risk_scenario_id: 'rs_01jd3k8m9v4q2w6e8r0t2y4u6i', likelihood: 3, impact: 4 }],
  },
)
export type RiskScenarioLinkBody = Static<typeof RiskScenarioLinkBody>

/** A risk scenario as linked to a use case: the scenario plus that use case's assessment of it. */
export const UseCaseRiskScenario = Type.Object({
  ...RiskScenario.properties,
  likelihood: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
  impact: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
})
export type UseCaseRiskScenario = Static<typeof UseCaseRiskScenario>
export const UseCaseRiskScenarioPage = PageOf(UseCaseRiskScenario)

const LinkedId = (prefix: string) =>
  Type.String({ maxLength: 64, description: `The ${prefix}_… id of the linked record.` })
const OwnerId = (prefix: string) => Type.String({ maxLength: 64, description: `The ${prefix}_… id.` })
export const UseCaseModelParams = Type.Object({ id: OwnerId('uc'), model_id: LinkedId('mdl') })
export const UseCaseVendorParams = Type.Object({ id: OwnerId('uc'), vendor_id: LinkedId('vnd') })
export const UseCaseRiskScenarioParams = Type.Object({ id: OwnerId('uc'), risk_scenario_id: LinkedId('rs') })
export const ModelVendorParams = Type.Object({ id: OwnerId('mdl'), vendor_id: LinkedId('vnd') })
