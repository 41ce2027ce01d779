import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Name, Nullable, Text, Timestamps } from '../../shared/schemas.js'

export const VendorStatus = Type.Enum(['active', 'under_review', 'inactive'])

const editable = {
  description: Type.Optional(Description({ examples: ['Hosted LLM provider.'] })),
  website: Type.Optional(Nullable(Text(500), { examples: ['https://vendor.example.com'] })),
  status: Type.Optional(Nullable(VendorStatus, { description: '`null` means `active`.' })),
}

export const Vendor = Type.Object({
  id: Id('vnd'),
  name: Name,
  description: Nullable(Type.String()),
  website: Nullable(Type.String()),
  status: VendorStatus,
  ...Timestamps,
})
export type Vendor = Static<typeof Vendor>

export const VendorCreate = Type.Object(
  { name: Name, ...editable },
  { additionalProperties: false, examples: [{ name: 'Acme AI', description: 'Hosted LLM provider.', website: 'https://acme-ai.example.com', status: 'under_review' }] },
)
export type VendorCreate = Static<typeof VendorCreate>

export const VendorUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ status: 'inactive', website: null }] },
)
export type VendorUpdate = Static<typeof VendorUpdate>

export const VendorListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['name', 'created_at', 'updated_at']),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' })),
    status: Type.Optional(VendorStatus),
  },
  { additionalProperties: false },
)
export type VendorListQuery = Static<typeof VendorListQuery>

export const VendorPage = PageOf(Vendor)
