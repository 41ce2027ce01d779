import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf, PageQuery } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, Timestamps } from '../../shared/schemas.js'

const editable = {
  description: Type.Optional(Description({ examples: ['Owns the credit models end to end.'] })),
}

export const Team = Type.Object({
  id: Id('team'),
  name: Name,
  description: Nullable(Type.String()),
  ...Timestamps,
})
export type Team = Static<typeof Team>

export const TeamCreate = Type.Object(
  { name: Name, ...editable },
  {
    additionalProperties: false,
    examples: [{ name: 'Credit risk', description: 'Owns the credit models end to end.' }],
  },
)
export type TeamCreate = Static<typeof TeamCreate>

export const TeamUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ description: null }] },
)
export type TeamUpdate = Static<typeof TeamUpdate>

export const TeamListQuery = NamedListQuery({
  member_id: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'Teams this user (usr_…) is a member of.',
      examples: ['usr_01jd3k8m9v4q2w6e8r0t2y4u6i'],
    }),
  ),
})
export type TeamListQuery = Static<typeof TeamListQuery>

export const TeamPage = PageOf(Team)

export const TeamMemberBody = Type.Object(
  { user_id: Type.String({ maxLength: 64, examples: ['usr_01jd3k8m9v4q2w6e8r0t2y4u6i'] }) },
  { additionalProperties: false },
)
export type TeamMemberBody = Static<typeof TeamMemberBody>

export const TeamMemberParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The team_… id.' }),
  user_id: Type.String({ maxLength: 64, description: 'The usr_… id.' }),
})

export const TeamMemberListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false })
export type TeamMemberListQuery = Static<typeof TeamMemberListQuery>
