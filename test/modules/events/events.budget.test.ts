import { describe, expect, it } from 'vitest'
import { StreamBudget } from '../../../src/modules/events/events.budget.js'

const KiB = 1024
const tick = () => new Promise((r) => setImmediate(r))

describe('StreamBudget: what all event streams hold at once', () => {
  it('grants in order while bytes are left, and the next waiter once some come back', async () => {
    const budget = new StreamBudget(100 * KiB, 100 * KiB)
    const signal = new AbortController().signal
    const first = await budget.take('a', 60 * KiB, signal)
    let second: (() => void) | undefined
    void budget.take('b', 60 * KiB, signal).then((release) => (second = release))
    await tick()
    expect(second).toBeUndefined()
    expect(budget.held).toBe(60 * KiB)
    first()
    first() // giving back twice gives back once
    await tick()
    expect(second).toBeDefined()
    expect(budget.held).toBe(60 * KiB)
  })

  it('keeps a tenant to its share without holding up other tenants behind it', async () => {
    const budget = new StreamBudget(100 * KiB, 40 * KiB)
    const signal = new AbortController().signal
    await budget.take('greedy', 40 * KiB, signal)
    const granted: string[] = []
    void budget.take('greedy', 10 * KiB, signal).then(() => granted.push('greedy'))
    void budget.take('other', 30 * KiB, signal).then(() => granted.push('other'))
    await tick()
    expect(granted).toEqual(['other'])
  })

  it('counts a record larger than a tenant’s share as that share, so it is read alone', async () => {
    const budget = new StreamBudget(100 * KiB, 40 * KiB)
    const release = await budget.take('a', 900 * KiB, new AbortController().signal)
    expect(budget.held).toBe(40 * KiB)
    release()
    expect(budget.held).toBe(0)
  })

  it('forgets a waiter whose stream ends before its turn', async () => {
    const budget = new StreamBudget(100 * KiB, 100 * KiB)
    const held = await budget.take('a', 100 * KiB, new AbortController().signal)
    const stop = new AbortController()
    const waiting = budget.take('b', 50 * KiB, stop.signal)
    stop.abort()
    await expect(waiting).rejects.toThrow()
    held()
    expect(budget.held).toBe(0)
    expect(await budget.take('c', 100 * KiB, new AbortController().signal)).toBeTypeOf('function')
  })
})
