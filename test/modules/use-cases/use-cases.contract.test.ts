import { describeEachDialect } from '../../helpers/harness.js'
import { contractTests } from '../../helpers/contract.js'

describeEachDialect('use cases: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/use_cases',
    resourceType: 'use_case',
    idPrefix: 'uc',
    validBody: (i) => ({ name: `Use case ${i}`, description: 'contract test' }),
    updateBody: { description: 'changed' },
    deletable: true,
  })
})
