import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { governedEditable, governedFilters, governedRead } from '../../shared/governed.schemas.js'
import { Description, HttpUrl, Id, Name, Nullable, Timestamps } from '../../shared/schemas.js'

export const VendorStatus = Type.Enum(['active', 'under_review', 'inactive'])

const editable = {
  description: Type.Optional(Description({ examples: ['Hosted LLM provider.'] })),
  website: Type.Optional(
    Nullable(HttpUrl(500, { description: 'An http:// or https:// URL.' }), {
      examples: ['https://vendor.example.com'],
    }),
  ),
  status: Type.Optional(Nullable(VendorStatus, { description: '`null` means `active`.' })),
  ...governedEditable,
}

export const Vendor = Type.Object({
  id: Id('vnd'),
  name: Name,
  description: Nullable(Type.String()),
  website: Nullable(Type.String()),
  status: VendorStatus,
  ...governedRead,
  ...Timestamps,
})
export type Vendor = Static<typeof Vendor>

export const VendorCreate = Type.Object(
  { name: Name, ...editable },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Acme AI',
        description: 'Hosted LLM provider.',
        website: 'https://acme-ai.example.com',
        status: 'under_review',
      },
    ],
  },
)
export type VendorCreate = Static<typeof VendorCreate>

export const VendorUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ status: 'inactive', website: null }] },
)
export type VendorUpdate = Static<typeof VendorUpdate>

export const VendorListQuery = NamedListQuery({
  status: Type.Optional(VendorStatus),
  ...governedFilters,
})
export type VendorListQuery = Static<typeof VendorListQuery>

export const VendorPage = PageOf(Vendor)
