import { Type } from 'typebox'

export const Readiness = Type.Object({
  message: Type.Boolean(),
  checks: Type.Optional(
    Type.Record(Type.String(), Type.String(), { description: 'Per dependency: ok, failing or timeout.' }),
  ),
})
