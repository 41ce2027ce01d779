import { Checkbox, MultiSelect, NumberInput, Select, TextInput } from '@mantine/core'
import { useEffect, useState } from 'react'
import { api, call } from './api'

export interface CustomFieldDef {
  id: string
  name: string
  description?: string | null
  type: string
  elementType?: string | null
  options?: string[]
  multiple?: boolean
  required?: boolean
  entityTypes?: string[]
  archived?: boolean
}

/** The tenant's custom fields that apply to an entity type (an empty entity_types means all). */
export function useCustomFields(entity: string): CustomFieldDef[] {
  const [fields, setFields] = useState<CustomFieldDef[]>([])
  useEffect(() => {
    void call(api.customFields.list({ pageLimit: 100 })).then((r) => {
      const all = (r.data?.items ?? []) as unknown as CustomFieldDef[]
      setFields(all.filter((f) => !f.archived && (!f.entityTypes?.length || f.entityTypes.includes(entity))))
    })
  }, [entity])
  return fields
}

/** People to pick from (the first hundred active users). */
export function useUserChoices(): { value: string; label: string }[] {
  const [users, setUsers] = useState<{ value: string; label: string }[]>([])
  useEffect(() => {
    void call(api.users.list({ pageLimit: 100, active: true } as never)).then((r) => {
      const items = (r.data?.items ?? []) as unknown as { id: string; name?: string | null; email: string }[]
      setUsers(items.map((u) => ({ value: u.id, label: u.name || u.email })))
    })
  }, [])
  return users
}

/** Teams to pick from (the first hundred), for an owner or an assignee. */
export function useTeamChoices(): { value: string; label: string }[] {
  const [teams, setTeams] = useState<{ value: string; label: string }[]>([])
  useEffect(() => {
    void call(api.teams.list({ pageLimit: 100 })).then((r) => {
      setTeams((r.data?.items ?? []).map((t) => ({ value: t.id, label: t.name })))
    })
  }, [])
  return teams
}

/** People and teams to pick from, in two groups, for an owner or an assignee. */
export function useOwnerChoices(): { group: string; items: { value: string; label: string }[] }[] {
  const users = useUserChoices()
  const teams = useTeamChoices()
  return [
    { group: 'People', items: users },
    { group: 'Teams', items: teams },
  ]
}

/** One custom field's input, by its type: select, user picker, date, checkbox, number or text. */
export function CustomFieldInput(props: {
  field: CustomFieldDef
  value: unknown
  onChange: (v: unknown) => void
  error?: string
}) {
  const { field: f, value, onChange, error } = props
  const users = useUserChoices()
  const common = { label: f.name, description: f.description ?? undefined, required: f.required, error }
  if (f.type === 'user') {
    return f.multiple ? (
      <MultiSelect {...common} searchable data={users} value={(value as string[]) ?? []} onChange={onChange} />
    ) : (
      <Select {...common} searchable clearable data={users} value={(value as string) ?? null} onChange={onChange} />
    )
  }
  if (f.elementType === 'select') {
    return f.multiple ? (
      <MultiSelect {...common} data={f.options ?? []} value={(value as string[]) ?? []} onChange={onChange} />
    ) : (
      <Select {...common} clearable data={f.options ?? []} value={(value as string) ?? null} onChange={onChange} />
    )
  }
  if (f.type === 'boolean' || f.elementType === 'checkbox') {
    return (
      <Checkbox
        label={f.name}
        description={common.description}
        error={error}
        checked={value === true}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
    )
  }
  if (f.type === 'datetime' || f.elementType === 'datepicker') {
    return (
      <TextInput
        {...common}
        type="date"
        value={typeof value === 'string' ? value.slice(0, 10) : ''}
        onChange={(e) => onChange(e.currentTarget.value ? `${e.currentTarget.value}T00:00:00.000Z` : undefined)}
      />
    )
  }
  if (f.type === 'number') {
    return (
      <NumberInput
        {...common}
        value={typeof value === 'number' ? value : ''}
        onChange={(n) => onChange(typeof n === 'number' ? n : undefined)}
      />
    )
  }
  return <TextInput {...common} value={(value as string) ?? ''} onChange={(e) => onChange(e.currentTarget.value)} />
}
