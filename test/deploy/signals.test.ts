import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { poolMetrics } from '../../src/ops/capacity-metrics.ts'
import { redisMetrics } from '../../src/ops/metrics.ts'
import { buildTestApp } from '../helpers/app.ts'
import { tempDir } from '../helpers/processes.ts'
import { scrape } from '../helpers/scrape.ts'

const ROOT = new URL('../..', import.meta.url).pathname
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yml')
const ALERT_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yml')
const DASHBOARD = join(ROOT, 'deploy/grafana/petstore.json')
const PROMTOOL = '/usr/bin/promtool'

// The service's own metric names and prom-client's process ones; `up` is Prometheus's own, and
// a name with a colon is a recording rule's (job:petstore_slo_errors:ratio_rate5m), not a metric.
const METRIC_NAME = /(?<![\w:])(?:petstore|nodejs|process|http)_[a-z0-9_]+(?![\w:])/g
const HISTOGRAM_SERIES = /_(?:bucket|sum|count)$/

/** The PromQL of every rule: `expr: …` on one line, or `expr: |` and the lines indented under it. */
function alertExpressions (yaml: string): string[] {
  const expressions: string[] = []
  const lines = yaml.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const found = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!)
    if (!found) continue
    if (found[2] !== '|') {
      expressions.push(found[2]!)
      continue
    }
    const block: string[] = []
    while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || indent(lines[i + 1]!) > found[1]!.length)) block.push(lines[++i]!.trim())
    expressions.push(block.join(' ').trim())
  }
  return expressions
}

function indent (line: string): number {
  return line.length - line.trimStart().length
}

/** Every panel target's `expr` and every template variable's `query`, rows' panels included. */
function dashboardExpressions (node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) dashboardExpressions(item, found)
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'expr' || key === 'query') && typeof value === 'string') found.push(value)
      else dashboardExpressions(value, found)
    }
  }
  return found
}

function metricNames (expressions: string[]): string[] {
  return [...new Set(expressions.flatMap((expression) => expression.match(METRIC_NAME) ?? []))].sort()
}

/** name → type, from the exposition's `# TYPE` lines. */
function exposedTypes (exposition: string): Map<string, string> {
  const types = new Map<string, string>()
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(name!, type!)
  return types
}

/** The names that are not on /metrics: a histogram's _bucket, _sum and _count count as its own. */
function missingFrom (names: string[], types: Map<string, string>): string[] {
  return names.filter((name) => !types.has(name) && types.get(name.replace(HISTOGRAM_SERIES, '')) !== 'histogram')
}

/** promtool, or undefined after a loud skip; under CI its absence is a failure. */
function promtool (t: TestContext): string | undefined {
  if (existsSync(PROMTOOL)) return PROMTOOL
  const message = `${PROMTOOL} is missing: install it with apt-get install -y prometheus (.ci/run does)`
  if (process.env.CI === 'true') assert.fail(message)
  process.stderr.write(`\n*** SKIPPED a promtool test: ${message} ***\n\n`)
  t.skip(message)
  return undefined
}

function runPromtool (tool: string, args: string[]): { status: number | null, output: string } {
  const run = spawnSync(tool, args, { encoding: 'utf8' })
  return { status: run.status, output: run.stdout + run.stderr }
}

test('every metric the alert rules and the dashboard name is on /metrics of a running app', async (t) => {
  const { app } = await buildTestApp(t)
  // As with REDIS_URL set, which adds Redis's metrics, and on PostgreSQL, which adds the pool's
  // (test/postgres/pool-metrics.test.ts reads them from a PostgreSQL app).
  redisMetrics(app.metrics)
  poolMetrics(app.metrics.registry, () => [])
  const types = exposedTypes(await scrape(app))
  // petstore_backup_*: written by `petstore backup --metrics-file` for node_exporter (test/deploy/alert-runbooks.test.ts).
  const alerts = metricNames(alertExpressions(readFileSync(ALERTS, 'utf8'))).filter((name) => !name.startsWith('petstore_backup_'))
  const dashboard = metricNames(dashboardExpressions(JSON.parse(readFileSync(DASHBOARD, 'utf8'))))
  assert.deepEqual(missingFrom(alerts, types), [])
  assert.deepEqual(missingFrom(dashboard, types), [])
  // Each signal operators watch is read from the metric that reports it.
  assert.deepEqual(alerts, [
    'http_request_duration_seconds_bucket',
    'http_request_duration_seconds_count',
    'http_requests_total',
    'nodejs_eventloop_lag_p99_seconds',
    'petstore_connections_refused_total',
    'petstore_db_pool_waiting_calls',
    'petstore_memory_limit_bytes',
    'petstore_rate_limited_total',
    'petstore_ready',
    'petstore_redis_up',
    'petstore_store_query_duration_seconds_count',
    'process_resident_memory_bytes',
    'process_start_time_seconds'
  ])
  assert.deepEqual(dashboard, [
    'http_request_duration_seconds_bucket',
    'http_requests_total',
    'nodejs_eventloop_lag_mean_seconds',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_heap_size_total_bytes',
    'nodejs_heap_size_used_bytes',
    'petstore_auth_failures_total',
    'petstore_build_info',
    'petstore_db_pool_connections',
    'petstore_db_pool_idle_connections',
    'petstore_db_pool_max_connections',
    'petstore_db_pool_waiting_calls',
    'petstore_memory_limit_bytes',
    'petstore_pets_created_total',
    'petstore_rate_limited_total',
    'petstore_ready',
    'petstore_redis_up',
    'petstore_reply_cache_hits_total',
    'petstore_reply_cache_misses_total',
    'petstore_store_query_duration_seconds_bucket',
    'petstore_store_query_duration_seconds_count',
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'process_start_time_seconds'
  ])
})

test('promtool accepts the alert rules, and each rule fires in its unit test and only there', (t) => {
  const tool = promtool(t)
  if (!tool) return
  const checked = runPromtool(tool, ['check', 'rules', ALERTS])
  assert.equal(checked.status, 0, checked.output)
  // 15 recording rules (the instances' two SLIs and the balancer's availability, over five windows) and 22 alerts.
  assert.match(checked.output, /SUCCESS: 37 rules found/)
  const tested = runPromtool(tool, ['test', 'rules', ALERT_TESTS])
  assert.equal(tested.status, 0, tested.output)
  // Every alert of the rules file is exercised by a test.
  const alertNames = [...readFileSync(ALERTS, 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]!).sort()
  const testedNames = [...new Set([...readFileSync(ALERT_TESTS, 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]!))].sort()
  assert.deepEqual(testedNames, alertNames)
})

test('every query of the dashboard is valid PromQL', (t) => {
  const tool = promtool(t)
  if (!tool) return
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'))
  const queries = dashboardExpressions(dashboard).filter((query) => !query.startsWith('label_values(') && query !== 'prometheus')
  // One query per panel target.
  assert.equal(queries.length, 35)
  // Grafana's variables as a query would have them filled in; each query as a recording rule.
  const filled = queries.map((query) => query.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'petstore').replaceAll('$instance', '.*'))
  const rules = 'groups:\n  - name: dashboard\n    rules:\n' +
    filled.map((query, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(query)}\n`).join('')
  const file = join(tempDir(t), 'dashboard-rules.yml')
  writeFileSync(file, rules)
  const checked = runPromtool(tool, ['check', 'rules', file])
  assert.equal(checked.status, 0, checked.output)
  assert.match(checked.output, new RegExp(`SUCCESS: ${queries.length} rules found`))
})
