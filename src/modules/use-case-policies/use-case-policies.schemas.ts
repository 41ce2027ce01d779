import { type Static, Type } from 'typebox'
import { PageOf, PageQuery } from '../../shared/pagination.js'
import { Owner, OwnerRef } from '../../shared/governed.schemas.js'
import { Id, Key, Name, Nullable, Text, Timestamps } from '../../shared/schemas.js'
import { Evidence } from '../evidence/evidence.schemas.js'

const DueDate = Type.String({ format: 'date', description: 'YYYY-MM-DD', examples: ['2027-08-02'] })

export const ControlStatus = Type.Enum(['pending', 'in_progress', 'implemented', 'not_applicable'])

export const AppliedPolicyPack = Type.Object({
  id: Id('pp'),
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  name: Name,
  description: Type.Union([Type.String(), Type.Null()]),
  due_date: Type.Union([DueDate, Type.Null()]),
  applied_at: Type.String({ format: 'date-time' }),
})
export type AppliedPolicyPack = Static<typeof AppliedPolicyPack>

export const ApplyPolicyPack = Type.Object(
  {
    key: Key,
    version: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: 'The latest version when absent.' }))),
    due_date: Type.Optional(Nullable(DueDate)),
  },
  {
    additionalProperties: false,
    description:
      'Applies a pack version: one use-case control per control of the pack (status pending). A control already present from another pack is kept, not duplicated. A key that is already applied answers 409; remove it first to change version.',
    examples: [{ key: 'EU-AI-ACT-HIGH-RISK', due_date: '2027-08-02' }],
  },
)
export type ApplyPolicyPack = Static<typeof ApplyPolicyPack>

export const AppliedPolicyPackPage = PageOf(AppliedPolicyPack)

export const RequirementStatus = Type.Object({
  requirement: Type.Integer({
    minimum: 0,
    description: "Position in the control version's evidence_requirements; what evidence links name.",
  }),
  type: Type.String(),
  description: Type.String(),
  required: Type.Boolean(),
  met: Type.Boolean({ description: 'At least one piece of evidence is linked for this requirement.' }),
  evidence_ids: Type.Array(Type.String()),
})
export type RequirementStatus = Static<typeof RequirementStatus>

export const UseCaseControl = Type.Object({
  id: Id('ucc'),
  use_case_id: Id('uc'),
  control_key: Key,
  control_version: Type.Integer({ minimum: 1 }),
  control_version_id: Id('pcv'),
  name: Name,
  policy_pack_key: Key,
  policy_pack_version: Type.Integer({ minimum: 1 }),
  status: ControlStatus,
  due_date: Type.Union([DueDate, Type.Null()]),
  notes: Type.Union([Type.String(), Type.Null()]),
  assignee: Nullable(Owner, { description: 'The user or team who is to implement the control.' }),
  evidence_count: Type.Integer({ minimum: 0, description: 'Pieces of evidence linked to this control.' }),
  evidence_requirements: Type.Array(RequirementStatus, {
    description: "The control version's evidence requirements, each with whether it is met.",
  }),
  ...Timestamps,
})
export type UseCaseControl = Static<typeof UseCaseControl>

export const ControlEvidenceLink = Type.Object(
  {
    evidence_id: Type.String({ maxLength: 64, description: 'An ev_… id of this tenant.' }),
    requirement: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          description:
            'Which evidence requirement it satisfies (its position); defaults to the only one when the control has exactly one.',
        }),
      ),
    ),
  },
  { additionalProperties: false, examples: [{ evidence_id: 'ev_01jd3k8m9v4q2w6e8r0t2y4u6i', requirement: 0 }] },
)
export type ControlEvidenceLink = Static<typeof ControlEvidenceLink>

export const ControlEvidence = Type.Object({
  use_case_control_id: Id('ucc'),
  evidence_id: Id('ev'),
  requirement: Nullable(Type.Integer({ minimum: 0 })),
  linked_at: Type.String({ format: 'date-time' }),
  evidence: Evidence,
})
export type ControlEvidence = Static<typeof ControlEvidence>
export const ControlEvidencePage = PageOf(ControlEvidence)
export const ControlEvidenceParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The uc_… id.' }),
  control_id: Type.String({ maxLength: 64, description: 'The ucc_… id.' }),
  evidence_id: Type.String({ maxLength: 64, description: 'The ev_… id.' }),
})

export const UseCaseControlUpdate = Type.Object(
  {
    status: Type.Optional(ControlStatus),
    notes: Type.Optional(Nullable(Text(10_000))),
    due_date: Type.Optional(Nullable(DueDate)),
    assignee: Type.Optional(Nullable(OwnerRef)),
  },
  {
    additionalProperties: false,
    examples: [{ status: 'implemented', notes: 'Override switch tested on 2026-11-20.' }],
  },
)
export type UseCaseControlUpdate = Static<typeof UseCaseControlUpdate>

export const UseCaseControlListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(ControlStatus),
    policy_pack_key: Type.Optional(Key),
    assignee_id: Type.Optional(Type.String({ maxLength: 64, description: 'Controls assigned to this user or team.' })),
  },
  { additionalProperties: false },
)
export type UseCaseControlListQuery = Static<typeof UseCaseControlListQuery>

export const UseCaseControlPage = PageOf(UseCaseControl)

/** A control in the tenant-wide list: the use case's control, with the use case's name to show beside it. */
export const TenantControl = Type.Object({
  ...UseCaseControl.properties,
  use_case_name: Name,
})
export type TenantControl = Static<typeof TenantControl>
export const TenantControlPage = PageOf(TenantControl)

export const TenantControlListQuery = Type.Object(
  {
    ...PageQuery,
    assignee_id: Type.Optional(Type.String({ maxLength: 64, description: 'Controls assigned to this user or team.' })),
    status: Type.Optional(ControlStatus),
    open: Type.Optional(
      Type.Boolean({
        description: 'true: pending or in_progress controls; false: implemented or not_applicable ones.',
      }),
    ),
    overdue: Type.Optional(
      Type.Boolean({
        description:
          'true: open controls due before today (UTC), as the governance summary counts them; false: all the others.',
      }),
    ),
    policy_pack_key: Type.Optional(Key),
  },
  {
    additionalProperties: false,
    examples: [{ assignee_id: 'usr_01jd3k8m9v4q2w6e8r0t2y4u6i', open: true }],
  },
)
export type TenantControlListQuery = Static<typeof TenantControlListQuery>

export const UseCasePackParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The uc_… id.' }),
  key: Type.String({ maxLength: 100, description: 'The policy pack key.' }),
})
export const UseCaseControlParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The uc_… id.' }),
  control_id: Type.String({ maxLength: 64, description: 'The ucc_… id.' }),
})
export const UseCasePageQuery = Type.Object(PageQuery, { additionalProperties: false })
