import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MetricValueWithName } from 'prom-client'
import { StoreDurations } from '../../src/ops/series-metrics.ts'
import { timedStore } from '../../src/store/timed-store.ts'
import type { Store } from '../../src/store/types.ts'
import { createTestStore, issueKey } from '../helpers/app.ts'

/** [operation, outcome, count] of each series, in the order of their first call. */
async function counts (durations: StoreDurations): Promise<Array<[string, string, number]>> {
  const values = (await durations.histogram.get()).values as Array<MetricValueWithName<string>>
  return values.filter((v) => v.metricName === 'durations_count').map((v) => [String(v.labels.operation), String(v.labels.outcome), v.value])
}

const newDurations = () => new StoreDurations({ name: 'durations', help: 'Store calls.' }, [0.001])

/** A store as a class of its own, with one method the Store interface does not have. */
class ExtendedStore {
  readonly kind = 'sqlite'
  readonly idsFollowCommitOrder = true
  closed = 0
  listeners: unknown[] = []
  pending: Array<(owners: number) => void> = []
  countOwners (): Promise<number> { return new Promise((resolve) => this.pending.push(resolve)) }
  keyVersion (): number { return 7 }
  getPet (id: bigint): undefined { if (id < 0n) throw new Error('negative id') }
  countPets (): Promise<number> { return Promise.reject(new Error('no database')) }
  async close (): Promise<void> { this.closed++ }
  watchWrites (listener: unknown): void { this.listeners.push(listener) }
  pools (): [] { return [] }
}

test('the timed store keeps the store\'s fields, keyVersion only when the store has it, and a synchronous getPet synchronous', async (t) => {
  const { store, cleanup } = await createTestStore()
  t.after(cleanup)
  await issueKey(store)
  const durations = newDurations()
  const timed = timedStore(store, durations)
  assert.equal(timed.kind, store.kind)
  assert.equal(timed.idsFollowCommitOrder, store.idsFollowCommitOrder)
  assert.equal(typeof timed.keyVersion, typeof store.keyVersion)
  if (store.keyVersion) assert.equal(timed.keyVersion!(), store.keyVersion())
  const read = timed.getPet(1n)
  assert.equal(read instanceof Promise, store.getPet(1n) instanceof Promise)
  assert.equal(await read, undefined)
  assert.equal(await timed.countApiKeys(), 1)
  assert.deepEqual(await counts(durations), [
    ...(store.keyVersion ? [['keyVersion', 'ok', 1]] : []),
    ['getPet', 'ok', 1],
    ['countApiKeys', 'ok', 1]
  ])
})

test('a method the Store interface does not list is timed too: the wrapper finds the methods on the store', async () => {
  const durations = newDurations()
  const extended = new ExtendedStore()
  const timed = timedStore(extended as unknown as Store, durations) as unknown as ExtendedStore
  const owners = timed.countOwners()
  // A promise is timed when it settles, not when the call returns it.
  assert.deepEqual(await counts(durations), [])
  extended.pending.shift()!(3)
  assert.equal(await owners, 3)
  assert.deepEqual(await counts(durations), [['countOwners', 'ok', 1]])
})

test('a value is timed at once and returned as it is; a throw and a rejection count as errors and reach the caller unchanged', async () => {
  const durations = newDurations()
  const timed = timedStore(new ExtendedStore() as unknown as Store, durations)
  assert.equal(timed.keyVersion!(), 7)
  assert.equal(timed.getPet(1n), undefined)
  assert.deepEqual(await counts(durations), [['keyVersion', 'ok', 1], ['getPet', 'ok', 1]])
  assert.throws(() => timed.getPet(-1n), { message: 'negative id' })
  await assert.rejects(timed.countPets(), { message: 'no database' })
  assert.deepEqual(await counts(durations), [['keyVersion', 'ok', 1], ['getPet', 'ok', 1], ['getPet', 'error', 1], ['countPets', 'error', 1]])
})

test('close, watchWrites and the pool figures reach the store untimed', async () => {
  const durations = newDurations()
  const extended = new ExtendedStore()
  const timed = timedStore(extended as unknown as Store, durations)
  const listener = () => {}
  timed.watchWrites(listener)
  assert.deepEqual((timed as unknown as ExtendedStore).pools(), [])
  await timed.close()
  assert.deepEqual({ closed: extended.closed, listeners: extended.listeners, series: await counts(durations) }, { closed: 1, listeners: [listener], series: [] })
})
