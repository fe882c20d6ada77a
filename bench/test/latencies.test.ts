import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Latencies } from '../src/load.ts'

test('benchmark latencies: nearest-rank percentiles of every recorded response, kept to the microsecond', () => {
  const latencies = new Latencies()
  // 100 000 responses (more than the first buffer holds): 0.001 ms .. 100 ms, recorded shuffled.
  const values = Array.from({ length: 100_000 }, (_, i) => (i + 1) / 1000)
  for (let i = values.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1)
    ;[values[i], values[j]] = [values[j]!, values[i]!]
  }
  for (const ms of values) latencies.add(ms)
  assert.deepEqual(latencies.percentiles(50, 99, 100), [50, 99, 100])
  assert.deepEqual(latencies.percentiles(0.001), [0.001])
})

test('benchmark latencies: a run with no responses has no percentiles', () => {
  assert.deepEqual(new Latencies().percentiles(50, 99), [Number.NaN, Number.NaN])
})
