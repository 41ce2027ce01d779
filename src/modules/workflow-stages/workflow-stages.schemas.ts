import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, Timestamps } from '../../shared/schemas.js'

export const StageType = Type.Enum(['start', 'intermediate', 'end'], {
  description:
    '`start` and `end` exist once per tenant and are system-managed; only `intermediate` stages are created, changed and deleted.',
})

const Position = Type.Integer({
  minimum: 1,
  description:
    'Place in the workflow. The start stage is always 0 and the end stage is always last; an intermediate stage takes a position ' +
    "from 1 up to the end stage's, and the stages at or after it move down by one. Positions need not be contiguous.",
  examples: [1],
})

const flags = {
  assessment_required: Type.Boolean({
    description: 'Use cases in this stage go through the `assessment` step.',
    examples: [true],
  }),
  evidence_collection_required: Type.Boolean({
    description: 'Use cases in this stage go through the `evidence_collection` step.',
    examples: [true],
  }),
}

export const WorkflowStage = Type.Object(
  {
    id: Id('ws'),
    name: Name,
    description: Nullable(Type.String()),
    type: StageType,
    position: Type.Integer({ minimum: 0, examples: [1] }),
    ...flags,
    ...Timestamps,
  },
  {
    examples: [
      {
        id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i',
        name: 'Legal review',
        description: 'Counsel checks the contractual basis.',
        type: 'intermediate',
        position: 1,
        assessment_required: true,
        evidence_collection_required: false,
        created_at: '2026-11-22T09:30:00.000Z',
        updated_at: '2026-11-22T09:30:00.000Z',
      },
    ],
  },
)
export type WorkflowStage = Static<typeof WorkflowStage>

const description = Type.Optional(Description({ examples: ['Counsel checks the contractual basis.'] }))

export const WorkflowStageCreate = Type.Object(
  {
    name: Name,
    description,
    type: Type.Optional(
      Type.Literal('intermediate', { description: 'Only intermediate stages can be created; may be omitted.' }),
    ),
    position: Type.Optional(
      Type.Union([Position, Type.Null()], { description: 'Absent or null: last, just before the end stage.' }),
    ),
    assessment_required: Type.Optional(
      Type.Union([flags.assessment_required, Type.Null()], { description: 'Default true.' }),
    ),
    evidence_collection_required: Type.Optional(
      Type.Union([flags.evidence_collection_required, Type.Null()], { description: 'Default true.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Legal review',
        description: 'Counsel checks the contractual basis.',
        evidence_collection_required: false,
      },
    ],
  },
)
export type WorkflowStageCreate = Static<typeof WorkflowStageCreate>

export const WorkflowStageUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    description,
    position: Type.Optional(Position),
    assessment_required: Type.Optional(flags.assessment_required),
    evidence_collection_required: Type.Optional(flags.evidence_collection_required),
  },
  { additionalProperties: false, examples: [{ name: 'Legal and privacy review', position: 2 }] },
)
export type WorkflowStageUpdate = Static<typeof WorkflowStageUpdate>

export const WorkflowStageListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['position', 'name', 'created_at']),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
    ),
    type: Type.Optional(StageType),
  },
  { additionalProperties: false, description: 'Default order: by position (start first, end last).' },
)
export type WorkflowStageListQuery = Static<typeof WorkflowStageListQuery>

export const WorkflowStagePage = PageOf(WorkflowStage)
