import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client'
import { RequestMetrics, StoreDurations } from '../../src/ops/series-metrics.ts'

const counterText = { name: 'http_requests_total', help: 'Requests.' }
const histogramText = { name: 'http_request_duration_seconds', help: 'Durations.' }
const storeText = { name: 'petstore_store_query_duration_seconds', help: 'Store calls.' }
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const storeBuckets = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

// Every bucket's bound exactly (a bound belongs to its own bucket), values between them, above
// the last bound, and zero.
const durationsFor = (bounds: number[]) => [0, 0.00004, 0.0004, ...bounds, ...bounds.map((b) => b * 1.5), 12, 0.0123456789]

/** prom-client's own Counter and Histograms, and the series metrics, each in a registry of its own. */
function registries () {
  const reference = new Registry()
  const labelNames = ['route', 'method', 'status'] as const
  const counter = new Counter({ name: counterText.name, help: counterText.help, labelNames, registers: [reference] })
  const histogram = new Histogram({ name: histogramText.name, help: histogramText.help, labelNames, buckets, registers: [reference] })
  const storeHistogram = new Histogram({ name: storeText.name, help: storeText.help, labelNames: ['operation', 'outcome'], buckets: storeBuckets, registers: [reference] })
  const own = new Registry()
  const metrics = new RequestMetrics(counterText, histogramText, buckets)
  const store = new StoreDurations(storeText, storeBuckets)
  own.registerMetric(metrics.counter)
  own.registerMetric(metrics.histogram)
  own.registerMetric(store.histogram)

  // Over several label sets, one of them unmatched.
  const observeAll = () => {
    const requests: Array<[string, string, number]> = [['/v1/pets', 'GET', 200], ['/v1/pets', 'POST', 201], ['/v1/pets/:petId', 'GET', 404], ['unmatched', 'GET', 404], ['/v1/pets', 'GET', 401]]
    durationsFor(buckets).forEach((seconds, i) => {
      for (const [route, method, status] of requests.slice(0, 1 + (i % requests.length))) {
        counter.inc({ route, method, status: String(status) })
        histogram.observe({ route, method, status: String(status) }, seconds)
        metrics.record(route, method, status, seconds)
      }
    })
    const calls: Array<[string, 'ok' | 'error']> = [['keyVersion', 'ok'], ['getPet', 'ok'], ['createPet', 'error'], ['listPets', 'ok']]
    durationsFor(storeBuckets).forEach((seconds, i) => {
      for (const [operation, outcome] of calls.slice(0, 1 + (i % calls.length))) {
        storeHistogram.observe({ operation, outcome }, seconds)
        store.record(operation, outcome, seconds)
      }
    })
  }
  observeAll()
  return { reference, own, observeAll }
}

test('the series metrics expose exactly what prom-client\'s Counter and Histogram expose for the same observations', async () => {
  const { reference, own } = registries()
  const expected = await reference.metrics()
  assert.ok(expected.split('\n').length > 120, 'every series is there')
  assert.match(expected, /^petstore_store_query_duration_seconds_bucket\{le="0.0001",operation="keyVersion",outcome="ok"\} 3$/m)
  assert.equal(await own.metrics(), expected)
  // And merged with other registries, as the app serves them.
  assert.equal(await Registry.merge([own]).metrics(), await Registry.merge([reference]).metrics())
})

test('in OpenMetrics text too, where the registry renames counters', async () => {
  const { reference, own } = registries()
  // Typed for the content type they were made with; switched here as an operator could.
  for (const registry of [reference, own]) (registry as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE)
  const expected = await reference.metrics()
  assert.match(expected, /^# TYPE http_requests counter$/m)
  assert.equal(await own.metrics(), expected)
})

test('resetting the registry empties every series, which then count again from zero', async () => {
  const { reference, own, observeAll } = registries()
  for (const registry of [reference, own]) registry.resetMetrics()
  assert.equal(await own.metrics(), await reference.metrics())
  // Series seen before the reset are started anew, not counted into the emptied ones.
  observeAll()
  const expected = await reference.metrics()
  assert.match(expected, /^http_requests_total\{route="\/v1\/pets",method="GET",status="200"\} 31$/m)
  assert.equal(await own.metrics(), expected)
})
