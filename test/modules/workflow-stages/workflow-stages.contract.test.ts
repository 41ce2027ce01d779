import { describeEachDialect } from '../../helpers/harness.js'
import { contractTests } from '../../helpers/contract.js'

describeEachDialect('workflow stages: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/workflow_stages',
    resourceType: 'workflow_stage',
    idPrefix: 'ws',
    validBody: (i) => ({ name: `Stage ${i}`, description: 'contract test' }),
    updateBody: { description: 'changed' },
    deletable: true,
  })
})
