import { type Static, Type } from 'typebox'
import { PageOf, PageQuery } from '../../shared/pagination.js'
import { HttpUrl, Id, Nullable } from '../../shared/schemas.js'

export const EvidenceKind = Type.Enum(['file', 'link'])

export const Evidence = Type.Object({
  id: Id('ev'),
  kind: EvidenceKind,
  title: Nullable(Type.String()),
  url: Nullable(Type.String({ description: 'Links only.' })),
  file_name: Nullable(Type.String({ description: 'Files only: the name it was uploaded under.' })),
  content_type: Nullable(Type.String()),
  size: Nullable(Type.Integer({ minimum: 0, description: 'Files only: bytes.' })),
  sha256: Nullable(Type.String({ description: 'Files only: hex SHA-256 of the content; also its ETag.' })),
  content_path: Nullable(Type.String({ description: 'Files only: where to download the content.' })),
  created_by: Nullable(Type.String({ description: 'Who registered it: the user id (usr_…) of a person, or the API key id (key_…) of an integration.' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
})
export type Evidence = Static<typeof Evidence>

export const EvidenceLinkCreate = Type.Object(
  {
    kind: Type.Literal('link'),
    url: HttpUrl(2048),
    title: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }),
  },
  {
    additionalProperties: false,
    examples: [{ kind: 'link', url: 'https://wiki.example.com/ai/oversight-procedure', title: 'Oversight procedure' }],
  },
)
export type EvidenceLinkCreate = Static<typeof EvidenceLinkCreate>

/**
 * Documents the multipart upload. The handler streams the parts itself, so there is no parsed body to check:
 * the schema has no `type`, which makes the (absent) body pass validation while OpenAPI still shows the form.
 */
export const EvidenceUpload = {
  properties: {
    file: { type: 'string', format: 'binary', description: 'The file (one).' },
    title: { type: 'string', maxLength: 500, description: 'Defaults to the file name.' },
  },
  required: ['file'],
}

export const EvidenceListQuery = Type.Object(
  {
    ...PageQuery,
    kind: Type.Optional(EvidenceKind),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Case-insensitive substring of the title, file name or URL.',
      }),
    ),
    use_case_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Evidence linked to a control of this use case or given in one of its questionnaire answers.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type EvidenceListQuery = Static<typeof EvidenceListQuery>

export const EvidencePage = PageOf(Evidence)

export const EvidenceContentHeaders = Type.Object({
  range: Type.Optional(Type.String({ description: 'One byte range, e.g. `bytes=0-1023`.' })),
})

export const EvidenceUploadBudget = Type.Object({
  limit_bytes: Type.Integer({
    description: 'Evidence bytes this API key may upload per minute (EVIDENCE_UPLOAD_MB_PER_MINUTE).',
  }),
  used_bytes: Type.Integer({ description: 'Bytes it uploaded in the current minute.' }),
  remaining_bytes: Type.Integer(),
  reset_time: Type.String({ format: 'date-time', description: 'When the minute ends and the budget is whole again.' }),
})

export const EvidenceUsage = Type.Object(
  {
    used_bytes: Type.Integer({
      description:
        'Evidence content the tenant stores, bytes: each distinct content once (a deduplicated file counts once), uploads still arriving included.',
    }),
    quota_bytes: Type.Integer({ description: 'The tenant’s storage quota (EVIDENCE_TENANT_QUOTA_MB), bytes.' }),
    remaining_bytes: Type.Integer({ description: 'What another upload may still store.' }),
    files: Type.Integer({ description: 'Distinct contents stored (several evidence records may share one).' }),
    uploads_in_progress: Type.Integer({ description: 'Uploads still arriving (or abandoned and not yet swept).' }),
    max_file_bytes: Type.Integer({ description: 'The largest file one upload may carry (EVIDENCE_MAX_MB), bytes.' }),
    upload_budget: EvidenceUploadBudget,
  },
  {
    examples: [
      {
        used_bytes: 73400320,
        quota_bytes: 1073741824,
        remaining_bytes: 1000341504,
        files: 12,
        uploads_in_progress: 0,
        max_file_bytes: 26214400,
        upload_budget: {
          limit_bytes: 104857600,
          used_bytes: 0,
          remaining_bytes: 104857600,
          reset_time: '2026-12-02T10:01:00.000Z',
        },
      },
    ],
  },
)
export type EvidenceUsage = Static<typeof EvidenceUsage>
