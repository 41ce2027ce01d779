// Type-level checks of the camelCase surface (run by `npm run typecheck` through tsconfig.test.json).
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { AuditLog, Client, ClientError, ErrorKind, Page, Result, UseCase } from '../src/index.js'
import { camelize, snakify } from '../src/index.js'

describe('types', () => {
  it('are camelCase over the generated wire types', () => {
    expectTypeOf<UseCase>()
      .toHaveProperty('riskCategoryLevel')
      .toEqualTypeOf<'high' | 'medium' | 'low' | 'none' | null>()
    expectTypeOf<UseCase>().toHaveProperty('workflowStageId').toEqualTypeOf<string | null>()
    expectTypeOf<UseCase>().not.toHaveProperty('risk_category_level')
    expectTypeOf<AuditLog['changes']>().toEqualTypeOf<{ [key: string]: unknown[] } | null>()
    expectTypeOf<Parameters<Client['useCases']['list']>[0]>().toEqualTypeOf<
      | {
          pageLimit?: number
          pageAfter?: string
          sort?: 'name' | '-name' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at'
          q?: string
          riskCategoryLevel?: 'high' | 'medium' | 'low' | 'none'
          workflowStageId?: string
          workflowStageStep?: 'assessment' | 'evidence_collection' | 'clear' | 'rejected'
          controlStatus?: 'pending' | 'in_progress' | 'implemented' | 'not_applicable'
          overdueControls?: boolean
          questionnaireCompletion?: 'complete' | 'incomplete' | 'none'
          createdAfter?: string
          createdBefore?: string
          ownerId?: string
          customFieldId?: string
          customFieldValue?: string
        }
      | undefined
    >()
    expectTypeOf<Awaited<ReturnType<Client['useCases']['get']>>>().toEqualTypeOf<Result<UseCase>>()
    expectTypeOf<Awaited<ReturnType<Client['useCases']['list']>>>().toEqualTypeOf<Result<Page<UseCase>>>()
    expectTypeOf<Awaited<ReturnType<Client['useCases']['delete']>>>().toEqualTypeOf<Result<null>>()
    expectTypeOf<Awaited<ReturnType<Client['auditLogs']['export']>>>().toEqualTypeOf<Result<string>>()
    expectTypeOf<ReturnType<Client['models']['listAll']>>().toEqualTypeOf<
      AsyncGenerator<Awaited<ReturnType<Client['models']['get']>>['data'] & {}, void, undefined>
    >()
    expectTypeOf<ClientError['kind']>().toEqualTypeOf<ErrorKind>()
    expectTypeOf(camelize({ a_b: { c_d: 1 } })).toEqualTypeOf<{ aB: { cD: number } }>()
    expectTypeOf(snakify({ aB: [{ cD: 1 }] })).toEqualTypeOf<{ a_b: { c_d: number }[] }>()
  })

  it('leaves the keys of maps keyed by data as they are (a dossier names stages by id)', () => {
    const dossier = camelize({
      workflow_stage_names: { ws_01ab: 'Legal review' },
      use_case: { risk_category_level: 'high' },
    })
    expect(dossier).toEqual({ workflowStageNames: { ws_01ab: 'Legal review' }, useCase: { riskCategoryLevel: 'high' } })
  })
})
