import { Alert, Button, Group, List, Loader, Select, Stack, TagsInput, Textarea, TextInput } from '@mantine/core'
import { useEffect, useMemo, useState } from 'react'
import { api, call, problemOf } from './api'
import { CustomFieldInput, type CustomFieldDef, useOwnerChoices } from './custom-fields'
import { MODEL_STATUS_LABEL, RISK_LABEL, VENDOR_STATUS_LABEL } from './labels'
import { useMe } from './me-context'
import {
  changedFields,
  checkAll,
  customValues,
  errorsByField,
  type FieldSpec,
  type FormValue,
  fieldSpecs,
  formValues,
  loadDocument,
  patchBody,
} from './schema-form'

export type Kind = 'use_cases' | 'models' | 'vendors'
type Json = Record<string, unknown>

const SCHEMA: Record<Kind, string> = { use_cases: 'UseCase', models: 'Model', vendors: 'Vendor' }
const FIELD_LABEL: Record<string, string> = {
  name: 'Name',
  description: 'Description',
  summary: 'Summary',
  ai_type: 'Kind of AI',
  system_type: 'Kind of system',
  risk_category_level: 'Risk level',
  regions: 'Regions',
  industries: 'Industries',
  source: 'Where it is recorded',
  owner: 'Owner',
  status: 'Status',
  provider: 'Provider',
  model_type: 'Model type',
  version: 'Version',
  website: 'Website',
}
const ENUM_LABEL: Record<string, Record<string, string>> = {
  RiskCategoryLevel: RISK_LABEL,
  ModelStatus: MODEL_STATUS_LABEL,
  VendorStatus: VENDOR_STATUS_LABEL,
}
const fieldLabel = (name: string) => FIELD_LABEL[name] ?? name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())

function get(kind: Kind, id: string) {
  const p = kind === 'models' ? api.models.get(id) : kind === 'vendors' ? api.vendors.get(id) : api.useCases.get(id)
  return call(p as Promise<{ data: Json | null; error: { message: string; status?: number; body?: unknown } | null }>)
}

function save(kind: Kind, id: string | undefined, body: Json) {
  const p = id
    ? kind === 'models'
      ? api.models.update(id, body as never)
      : kind === 'vendors'
        ? api.vendors.update(id, body as never)
        : api.useCases.update(id, body as never)
    : kind === 'models'
      ? api.models.create(body as never)
      : kind === 'vendors'
        ? api.vendors.create(body as never)
        : api.useCases.create(body as never)
  return call(p as Promise<{ data: Json | null; error: { message: string; status?: number; body?: unknown } | null }>)
}

/**
 * A create or edit form whose fields come from the service's OpenAPI schema (`…Create` / `…Update`), then the
 * record's custom fields by type. While it is open, a change someone else makes to the record is announced and
 * never replaces what the person typed; saving sends only the fields they changed.
 */
export function RecordForm(props: {
  kind: Kind
  /** The record to edit (as the client returns it); absent to create one. */
  record?: Json
  fields: CustomFieldDef[]
  onSaved: (record: Json) => void
}) {
  const { kind, record } = props
  const me = useMe()
  const id = record?.id as string | undefined
  const [specs, setSpecs] = useState<FieldSpec[] | string | undefined>()
  const [base, setBase] = useState<Json | undefined>(record)
  const [values, setValues] = useState<Record<string, FormValue>>({})
  const [custom, setCustom] = useState<Record<string, unknown>>(() => customValues(record))
  const [latest, setLatest] = useState<Json | undefined>()
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [general, setGeneral] = useState<string[]>([])
  const [confirmOverwrite, setConfirmOverwrite] = useState<string[] | undefined>()
  const [busy, setBusy] = useState(false)
  const owners = useOwnerChoices()

  // biome-ignore lint/correctness/useExhaustiveDependencies: the form starts from the record it was opened with, once
  useEffect(() => {
    let live = true
    loadDocument().then(
      (doc) => {
        if (!live) return
        const s = id
          ? fieldSpecs(doc, `${SCHEMA[kind]}Update`, `${SCHEMA[kind]}Create`)
          : fieldSpecs(doc, `${SCHEMA[kind]}Create`)
        setSpecs(s)
        setValues(formValues(s, record))
      },
      (e: Error) => live && setSpecs(e.message),
    )
    return () => {
      live = false
    }
  }, [kind, id])

  // Someone else's change to this record while the form is open: read it, say so, keep the person's values.
  useEffect(() => {
    if (!id) return
    const controller = new AbortController()
    void (async () => {
      try {
        for await (const event of api.events.stream({}, { signal: controller.signal })) {
          const r = event.record
          if (r.resourceId !== id || (me.user && r.actor?.id === me.user.id)) continue
          const now = await get(kind, id)
          if (now.data) setLatest(now.data)
        }
      } catch {
        // No stream (refused, or the form closed): the check before saving still catches a change.
      }
    })()
    return () => controller.abort()
  }, [id, kind, me.user])

  const specList = Array.isArray(specs) ? specs : []
  const original = useMemo(() => formValues(specList, base), [specList, base])
  const theirs =
    latest && latest.updatedAt !== base?.updatedAt
      ? changedFields(specList, original, formValues(specList, latest))
      : []
  const theirCustom =
    latest && latest.updatedAt !== base?.updatedAt
      ? Object.keys({ ...customValues(latest), ...customValues(base) }).filter(
          (f) => JSON.stringify(customValues(latest)[f] ?? null) !== JSON.stringify(customValues(base)[f] ?? null),
        )
      : []
  const changedByThem = latest !== undefined && latest.updatedAt !== base?.updatedAt

  if (specs === undefined) return <Loader aria-label="Loading the form" />
  if (typeof specs === 'string') return <Alert color="red">{specs}</Alert>

  const submit = async (overwrite: boolean) => {
    const problems = checkAll(specs, values)
    setErrors(problems)
    setGeneral([])
    if (Object.keys(problems).length) return
    const { body, customSent } = patchBody(specs, original, values, customValues(base), custom)
    if (id && Object.keys(body).length === 0) {
      setGeneral(['Nothing changed.'])
      return
    }
    setBusy(true)
    try {
      if (id && !overwrite) {
        // The API takes no If-Match on these records: read it once more and compare, so a change made since the
        // form opened is shown before it could be overwritten.
        const now = await get(kind, id)
        if (now.data && now.data.updatedAt !== base?.updatedAt) {
          setLatest(now.data)
          const mine = changedFields(specs, original, values)
          const clash = changedFields(specs, original, formValues(specs, now.data)).filter((f) => mine.includes(f))
          if (clash.length) {
            setConfirmOverwrite(clash)
            return
          }
        }
      }
      const r = await save(kind, id, body)
      if (r.error) {
        const problem = problemOf(r.error)
        const placed = errorsByField(problem.errors, specs, customSent)
        setErrors(placed.byField)
        setGeneral(
          problem.errors.length && !placed.general.length
            ? ['See the fields marked below.']
            : [problem.message, ...placed.general],
        )
        return
      }
      setConfirmOverwrite(undefined)
      props.onSaved(r.data!)
    } finally {
      setBusy(false)
    }
  }

  const input = (spec: FieldSpec) => {
    const common = {
      key: spec.name,
      label: fieldLabel(spec.name),
      required: spec.required,
      error: errors[spec.name],
      'data-field': spec.name,
    }
    const v = values[spec.name] ?? null
    const set = (next: FormValue) => setValues((all) => ({ ...all, [spec.name]: next }))
    switch (spec.kind) {
      case 'enum': {
        const labels = ENUM_LABEL[spec.enumName ?? ''] ?? {}
        return (
          <Select
            {...common}
            clearable={!spec.required}
            data={(spec.enumValues ?? []).map((value) => ({ value, label: labels[value] ?? value }))}
            value={typeof v === 'string' ? v : null}
            onChange={set}
          />
        )
      }
      case 'owner':
        return (
          <Select
            {...common}
            clearable
            searchable
            data={owners}
            value={typeof v === 'string' ? v : null}
            onChange={set}
          />
        )
      case 'list':
        return (
          <TagsInput
            {...common}
            description="Press Enter after each one"
            maxTags={spec.maxItems}
            value={Array.isArray(v) ? v : []}
            onChange={set}
          />
        )
      case 'longtext':
        return (
          <Textarea
            {...common}
            autosize
            minRows={2}
            maxRows={10}
            value={typeof v === 'string' ? v : ''}
            onChange={(e) => set(e.currentTarget.value)}
          />
        )
      default:
        return (
          <TextInput
            {...common}
            type={spec.kind === 'url' ? 'url' : 'text'}
            maxLength={spec.maxLength}
            placeholder={spec.kind === 'url' ? 'https://…' : undefined}
            value={typeof v === 'string' ? v : ''}
            onChange={(e) => set(e.currentTarget.value)}
          />
        )
    }
  }

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        void submit(false)
      }}
    >
      <Stack>
        {changedByThem && (
          <Alert color="blue" title="Someone else changed this record" role="status" data-testid="changed-elsewhere">
            {theirs.length + theirCustom.length > 0
              ? `Changed since you opened this form: ${[...theirs.map(fieldLabel), ...theirCustom.map((f) => props.fields.find((x) => x.id === f)?.name ?? f)].join(', ')}. `
              : ''}
            What you typed is kept; saving sends only the fields you changed.
            <Group mt="xs">
              <Button
                size="xs"
                variant="default"
                onClick={() => {
                  setBase(latest)
                  setValues(formValues(specs, latest))
                  setCustom(customValues(latest))
                  setConfirmOverwrite(undefined)
                }}
              >
                Discard mine and show theirs
              </Button>
            </Group>
          </Alert>
        )}
        {confirmOverwrite && (
          <Alert color="orange" title="They changed what you changed" role="alert">
            {confirmOverwrite.map(fieldLabel).join(', ')}: saving puts your values in place of theirs.
            <Group mt="xs">
              <Button size="xs" color="orange" onClick={() => void submit(true)}>
                Save mine anyway
              </Button>
            </Group>
          </Alert>
        )}
        {general.length > 0 && (
          <Alert color="red" title="Not saved" role="alert">
            <List size="sm">
              {general.map((g) => (
                <List.Item key={g}>{g}</List.Item>
              ))}
            </List>
          </Alert>
        )}
        {specs.map(input)}
        {props.fields.map((f) => (
          <CustomFieldInput
            key={f.id}
            field={f}
            value={custom[f.id]}
            onChange={(v) => setCustom((c) => ({ ...c, [f.id]: v }))}
            error={errors[`cf:${f.id}`]}
          />
        ))}
        <Group justify="flex-end">
          <Button type="submit" loading={busy}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
