import { expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'
import { suiteApp } from '../../helpers/suite-app.js'

describeEachDialect('custom fields: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/custom_fields',
    resourceType: 'custom_field',
    idPrefix: 'cf',
    validBody: (i) => ({ name: `Field ${i}`, type: 'string' }),
    updateBody: { archived: true },
    deletable: true,
    writer: 'admin',
  })
})

describeEachDialect('custom fields: names', (dialect) =>
  namedRecordTests(dialect, { collection: '/custom_fields', writer: 'admin' }),
)

describeEachDialect('custom fields and their values', (dialect) => {
  const suite = suiteApp(dialect)
  const { write, admin, post } = suite
  const field = (payload: object) => post('/custom_fields', payload)

  it('defaults the element to the type and checks that a definition hangs together (422)', async () => {
    expect(await field({ name: 'Plain' })).toMatchObject({
      type: 'string',
      element_type: 'input',
      options: [],
      multiple: false,
      required: false,
      entity_types: [],
      archived: false,
    })
    expect(await field({ name: 'Approver', type: 'user' })).toMatchObject({ element_type: 'select' })
    expect(await field({ name: 'Reviewed on', type: 'datetime' })).toMatchObject({ element_type: 'datepicker' })
    const bad = async (payload: object) => {
      const res = await admin({ method: 'POST', url: '/custom_fields', payload })
      expect(res.statusCode).toBe(422)
      return res.json().errors[0].field
    }
    expect(await bad({ name: 'No options', element_type: 'select' })).toBe('options')
    expect(await bad({ name: 'Stray options', options: ['a'] })).toBe('options')
    expect(await bad({ name: 'Checkbox text', element_type: 'checkbox' })).toBe('element_type')
    expect(
      await bad({ name: 'Bad number options', type: 'number', element_type: 'select', options: ['1', 'two'] }),
    ).toBe('options/1')
    expect(await bad({ name: 'Bad type', type: 'color' })).toBe('type')
    expect(await bad({ name: 'Bad entity', entity_types: ['risk_type'] })).toBe('entity_types/0')
  })

  it('checks values per type, option, multiple, entity type and archive, naming the member; nothing is written', async () => {
    const user = await post('/users', { email: 'owner@example.com', name: 'Olive Owner' })
    const text = await field({ name: 'Cost centre' })
    const num = await field({ name: 'Headcount', type: 'number' })
    const flag = await field({ name: 'Customer facing', type: 'boolean' })
    const when = await field({ name: 'Next review', type: 'datetime' })
    const who = await field({ name: 'Reviewer', type: 'user' })
    const unit = await field({ name: 'Business unit', element_type: 'select', options: ['Retail', 'Corporate'] })
    const tags = await field({ name: 'Tags', multiple: true })
    const modelOnly = await field({ name: 'Azure resource id', entity_types: ['model'] })
    const gone = await field({ name: 'Old field' })
    await admin({ method: 'PATCH', url: `/custom_fields/${gone.id}`, payload: { archived: true } })
    const stranger = (
      await suite.t.as('globex', 'admin')({ method: 'POST', url: '/custom_fields', payload: { name: 'Theirs' } })
    ).json()

    const value = (custom_field_id: string, v: unknown) => ({ custom_field_id, value: v })
    const rejected = async (values: object[], member: string) => {
      const res = await write({
        method: 'POST',
        url: '/use_cases',
        payload: { name: `Rejected ${member}`, custom_fields: values },
      })
      expect(res.statusCode, res.body).toBe(422)
      expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(member)
    }
    const ok = [value(text.id, 'CC-1')]
    await rejected([...ok, value(num.id, 'twelve')], 'custom_fields/1/value')
    await rejected([...ok, value(flag.id, 'yes')], 'custom_fields/1/value')
    await rejected([...ok, value(when.id, 'next tuesday')], 'custom_fields/1/value')
    await rejected([...ok, value(who.id, 'usr_00000000000000000000000000')], 'custom_fields/1/value')
    await rejected([...ok, value(unit.id, 'Wholesale')], 'custom_fields/1/value')
    await rejected([...ok, value(tags.id, 'single')], 'custom_fields/1/value')
    await rejected([...ok, value(text.id, ['a', 'b'])], 'custom_fields/1/custom_field_id')
    await rejected([...ok, value(modelOnly.id, 'x')], 'custom_fields/1/custom_field_id')
    await rejected([...ok, value(gone.id, 'x')], 'custom_fields/1/custom_field_id')
    await rejected([...ok, value(stranger.id, 'x')], 'custom_fields/1/custom_field_id')
    await rejected([...ok, value('cf_nope', 'x')], 'custom_fields/1/custom_field_id')
    const list = await write({ method: 'GET', url: '/use_cases?q=rejected' })
    expect(list.json().items).toEqual([])

    const uc = await post('/use_cases', {
      name: 'Valued',
      custom_fields: [
        value(text.id, 'CC-1'),
        value(num.id, 12.5),
        value(flag.id, true),
        value(when.id, '2027-01-02T03:04:05+01:00'),
        value(who.id, user.id),
        value(unit.id, 'Retail'),
        value(tags.id, ['a', 'b']),
      ],
    })
    const byName = Object.fromEntries(uc.custom_fields.map((v: { name: string; value: unknown }) => [v.name, v.value]))
    expect(byName).toEqual({
      'Cost centre': 'CC-1',
      Headcount: 12.5,
      'Customer facing': true,
      'Next review': '2027-01-02T02:04:05.000Z',
      Reviewer: user.id,
      'Business unit': 'Retail',
      Tags: ['a', 'b'],
    })
    expect(uc.custom_fields[0]).toEqual({ custom_field_id: text.id, name: 'Cost centre', value: 'CC-1' })
    expect((await write({ method: 'GET', url: `/use_cases/${uc.id}` })).json()).toEqual(uc)
  })

  it('updates named values only, clears with null, audits custom_fields.<name>, and keeps the rest', async () => {
    const a = await field({ name: 'Region code' })
    const b = await field({ name: 'Tier', type: 'number' })
    const model = await post('/models', {
      name: 'Valued model',
      custom_fields: [
        { custom_field_id: a.id, value: 'EU-1' },
        { custom_field_id: b.id, value: 1 },
      ],
    })
    const patched = await write({
      method: 'PATCH',
      url: `/models/${model.id}`,
      payload: { custom_fields: [{ custom_field_id: b.id, value: 2 }] },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect(patched.json().custom_fields.map((v: { value: unknown }) => v.value)).toEqual(['EU-1', 2])
    const cleared = (
      await write({
        method: 'PATCH',
        url: `/models/${model.id}`,
        payload: { custom_fields: [{ custom_field_id: a.id, value: null }] },
      })
    ).json()
    expect(cleared.custom_fields).toEqual([{ custom_field_id: b.id, name: 'Tier', value: 2 }])
    // Sending the same value again changes nothing and writes no audit record.
    await write({
      method: 'PATCH',
      url: `/models/${model.id}`,
      payload: { custom_fields: [{ custom_field_id: b.id, value: 2 }] },
    })
    const audit = (await write({ method: 'GET', url: `/audit_logs?resource_id=${model.id}` })).json().items
    expect(audit.map((r: { action: string; changes: unknown }) => [r.action, r.changes])).toEqual([
      [
        'model.created',
        {
          name: [null, 'Valued model'],
          status: [null, 'none'],
          'custom_fields.Region code': [null, 'EU-1'],
          'custom_fields.Tier': [null, 1],
        },
      ],
      ['model.updated', { 'custom_fields.Tier': [1, 2] }],
      ['model.updated', { 'custom_fields.Region code': ['EU-1', null] }],
    ])
  })

  it('requires required fields on create and refuses to clear them; a field with values is archived, not deleted', async () => {
    const req = await field({ name: 'Risk owner code', required: true, entity_types: ['vendor'] })
    const missing = await write({ method: 'POST', url: '/vendors', payload: { name: 'No code' } })
    expect(missing.statusCode).toBe(422)
    expect(missing.json().errors).toContainEqual({
      field: 'custom_fields',
      message: 'the custom field "Risk owner code" is required',
    })
    expect(missing.json().detail).toBe('custom_fields: the custom field "Risk owner code" is required')
    // Use cases are not its entity type: they need no value.
    expect((await write({ method: 'POST', url: '/use_cases', payload: { name: 'Not a vendor' } })).statusCode).toBe(201)
    const vendor = await post('/vendors', { name: 'Coded', custom_fields: [{ custom_field_id: req.id, value: 'R-7' }] })
    const clear = await write({
      method: 'PATCH',
      url: `/vendors/${vendor.id}`,
      payload: { custom_fields: [{ custom_field_id: req.id, value: null }] },
    })
    expect(clear.statusCode).toBe(422)
    expect(clear.json().errors[0].field).toBe('custom_fields/0/value')

    expect((await admin({ method: 'DELETE', url: `/custom_fields/${req.id}` })).statusCode).toBe(409)
    expect(
      (await admin({ method: 'PATCH', url: `/custom_fields/${req.id}`, payload: { type: 'number' } })).statusCode,
    ).toBe(409)
    expect(
      (await admin({ method: 'PATCH', url: `/custom_fields/${req.id}`, payload: { archived: true } })).statusCode,
    ).toBe(200)
    // Archived: no longer required, its value still shown.
    expect((await write({ method: 'POST', url: '/vendors', payload: { name: 'After archive' } })).statusCode).toBe(201)
    expect((await write({ method: 'GET', url: `/vendors/${vendor.id}` })).json().custom_fields).toEqual([
      { custom_field_id: req.id, name: 'Risk owner code', value: 'R-7' },
    ])
    // Deleting the vendor takes its values; then the field can go.
    expect((await write({ method: 'DELETE', url: `/vendors/${vendor.id}` })).statusCode).toBe(204)
    expect((await admin({ method: 'DELETE', url: `/custom_fields/${req.id}` })).statusCode).toBe(204)
  })

  it('finds records by value, exactly and by typed value, with keyset pages; bad filters are 400', async () => {
    const rid = await field({ name: 'Resource id', entity_types: ['model'] })
    const size = await field({ name: 'Size', type: 'number' })
    for (let i = 0; i < 5; i++) {
      await post('/models', {
        name: `Synced ${i}`,
        custom_fields: [
          { custom_field_id: rid.id, value: i % 2 === 0 ? 'res-even' : `res-${i}` },
          { custom_field_id: size.id, value: 10 },
        ],
      })
    }
    const read = suite.t.as('acme', 'read')
    const names = async (query: string) =>
      (await read({ method: 'GET', url: `/models?${query}` })).json().items.map((m: { name: string }) => m.name)
    expect(await names(`custom_field_id=${rid.id}&custom_field_value=res-3`)).toEqual(['Synced 3'])
    expect(await names(`custom_field_id=${rid.id}&custom_field_value=RES-3`)).toEqual([])
    expect(await names(`custom_field_id=${size.id}&custom_field_value=10.0&q=synced&sort=-name&page_limit=2`)).toEqual([
      'Synced 4',
      'Synced 3',
    ])
    const first = (
      await read({ method: 'GET', url: `/models?custom_field_id=${rid.id}&custom_field_value=res-even&page_limit=2` })
    ).json()
    expect(first.items.map((m: { name: string }) => m.name)).toEqual(['Synced 0', 'Synced 2'])
    const second = (
      await read({
        method: 'GET',
        url: `/models?custom_field_id=${rid.id}&custom_field_value=res-even&page_limit=2&page_after=${first.pagination.next_cursor}`,
      })
    ).json()
    expect(second.items.map((m: { name: string }) => m.name)).toEqual(['Synced 4'])
    expect(second.pagination).toEqual({ has_more: false, next_cursor: null })
    expect((await read({ method: 'GET', url: `/models?custom_field_id=${rid.id}` })).statusCode).toBe(400)
    expect(
      (await read({ method: 'GET', url: `/models?custom_field_id=${size.id}&custom_field_value=ten` })).statusCode,
    ).toBe(400)
    expect(
      (await read({ method: 'GET', url: '/models?custom_field_id=cf_nope&custom_field_value=x' })).statusCode,
    ).toBe(400)
    // Another tenant's field is unknown here.
    expect(
      (
        await suite.t.as(
          'globex',
          'read',
        )({ method: 'GET', url: `/models?custom_field_id=${rid.id}&custom_field_value=res-3` })
      ).statusCode,
    ).toBe(400)
  })
})
