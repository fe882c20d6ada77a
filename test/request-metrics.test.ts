import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client'
import { RequestMetrics } from '../src/plugins/request-metrics.ts'

const names = { counter: 'http_requests_total', histogram: 'http_request_duration_seconds' }
const help = { counter: 'Requests.', histogram: 'Durations.' }
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** prom-client's own Counter and Histogram, and the request metrics, each in a registry of its own. */
function registries () {
  const reference = new Registry()
  const labelNames = ['route', 'method', 'status'] as const
  const counter = new Counter({ name: names.counter, help: help.counter, labelNames, registers: [reference] })
  const histogram = new Histogram({ name: names.histogram, help: help.histogram, labelNames, buckets, registers: [reference] })
  const own = new Registry()
  const metrics = new RequestMetrics(names, help, buckets)
  own.registerMetric(metrics.counter)
  own.registerMetric(metrics.histogram)

  // Every bucket's bound exactly (a bound belongs to its own bucket), values between them,
  // above the last bound, and zero; over several label sets, one of them unmatched.
  const durations = [0, 0.0004, ...buckets, ...buckets.map((b) => b * 1.5), 12, 0.0123456789]
  const requests: Array<[string, string, number]> = [['/v1/pets', 'GET', 200], ['/v1/pets', 'POST', 201], ['/v1/pets/:petId', 'GET', 404], ['unmatched', 'GET', 404], ['/v1/pets', 'GET', 401]]
  durations.forEach((seconds, i) => {
    for (const [route, method, status] of requests.slice(0, 1 + (i % requests.length))) {
      counter.inc({ route, method, status: String(status) })
      histogram.observe({ route, method, status: String(status) }, seconds)
      metrics.record(route, method, status, seconds)
    }
  })
  return { reference, own }
}

test('the request metrics expose exactly what prom-client\'s Counter and Histogram expose for the same requests', async () => {
  const { reference, own } = registries()
  const expected = await reference.metrics()
  assert.ok(expected.split('\n').length > 80, 'every series is there')
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
