import { describe, expect, it } from 'vitest'
import { ModelRecord, UseCaseRecord, VendorRecord } from '../../../src/modules/configuration/records.schemas.js'
import { ModelUpdate } from '../../../src/modules/models/models.schemas.js'
import { UseCaseUpdate } from '../../../src/modules/use-cases/use-cases.schemas.js'
import { VendorUpdate } from '../../../src/modules/vendors/vendors.schemas.js'

// What a PATCH writes but a bundle says another way: the owner by email or team name, links and answers by name.
const SAID_OTHERWISE = ['owner', 'questionnaire_ids', 'creator_id']

describe('records bundles carry every field a record is edited by', () => {
  it.each([
    ['use case', UseCaseUpdate, UseCaseRecord],
    ['model', ModelUpdate, ModelRecord],
    ['vendor', VendorUpdate, VendorRecord],
  ])('%s', (_family, update, record) => {
    const edited = Object.keys(update.properties).filter((key) => !SAID_OTHERWISE.includes(key))
    const missing = edited.filter((key) => !(key in record.properties))
    expect(missing, 'fields a bundle would drop: add them to the record schema').toEqual([])
  })
})
