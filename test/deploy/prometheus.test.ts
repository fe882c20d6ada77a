import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parse } from 'yaml'
import { readCompose } from '../helpers/compose.ts'
import { freePort, HAPROXY_CFG, haproxyMissing, startHaproxy, unavailable } from '../helpers/haproxy.ts'
import { startServer, stopProcess, tempDir } from '../helpers/processes.ts'

/**
 * deploy/prometheus/prometheus.yml, compose's monitoring profile: it names every compose instance
 * on its metrics listener and haproxy on its stats port, loads the shipped rules, and a real
 * Prometheus on it (the targets moved to local processes) scrapes them all.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const CONFIG = 'deploy/prometheus/prometheus.yml'
const METRICS_PORT = 9464

interface ScrapeConfig { job_name: string, metrics_path?: string, static_configs: Array<{ targets: string[] }> }
interface PrometheusConfig { rule_files: string[], scrape_configs: ScrapeConfig[] }

const readConfig = () => parse(readFileSync(join(ROOT, CONFIG), 'utf8')) as PrometheusConfig
const targetsOf = (config: PrometheusConfig) => Object.fromEntries(config.scrape_configs.map((job) => [job.job_name, job.static_configs.flatMap((group) => group.targets)]))

function missing (tool: string): string | undefined {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0 ? undefined : `${tool} is missing: install it with apt-get install -y prometheus`
}

test('prometheus.yml scrapes every compose instance on its metrics port and haproxy on its stats port, and loads alerts.yml; compose runs it under the monitoring profile', () => {
  const services = readCompose()
  const instances = Object.keys(services).filter((name) => /^petstore-\d+$/.test(name)).sort()
  const haproxyStats = /bind "\$\{PETSTORE_STATS_BIND-:(\d+)\}"/.exec(readFileSync(join(ROOT, HAPROXY_CFG), 'utf8'))?.[1]
  const config = readConfig()
  assert.deepEqual(targetsOf(config), { petstore: instances.map((name) => `${name}:${METRICS_PORT}`), haproxy: [`haproxy:${haproxyStats}`] })
  assert.deepEqual(config.rule_files, ['alerts.yml'])
  assert.ok(config.scrape_configs.every((job) => job.metrics_path === undefined), 'both serve /metrics, the default path')

  const prometheus = services.prometheus! as typeof services[string] & { profiles?: string[] }
  assert.deepEqual(prometheus.profiles, ['monitoring'])
  assert.deepEqual(prometheus.volumes?.filter((volume) => volume.startsWith('./')), [
    `./${CONFIG}:/etc/prometheus/prometheus.yml:ro`,
    './deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro'
  ], 'the rules beside the configuration, where rule_files looks')
  assert.ok(prometheus.command?.includes('--config.file=/etc/prometheus/prometheus.yml'))
})

test('promtool accepts prometheus.yml and the rules it loads', (t) => {
  if (unavailable(t, 'promtool', missing('promtool'))) return
  const checked = spawnSync('promtool', ['check', 'config', CONFIG], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(checked.status, 0, checked.stderr)
  assert.match(checked.stdout, /SUCCESS: deploy\/prometheus\/prometheus\.yml is valid prometheus config file syntax/)
  assert.match(checked.stdout, /Checking deploy\/prometheus\/alerts\.yml\n {2}SUCCESS: \d+ rules found/)
})

test('Prometheus on prometheus.yml, its targets moved to two local instances and haproxy, scrapes all three and loads every alert rule', { timeout: 120_000 }, async (t) => {
  if (unavailable(t, 'prometheus', missing('prometheus'))) return
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  const folder = tempDir(t)
  const servers = await Promise.all([1, 2].map((n) => startServer(t, { DATABASE_URL: `sqlite:${join(folder, `petstore-${n}.db`)}` })))
  const instancePorts = servers.map((server) => Number(new URL(server.metricsUrl).port))
  const apiPorts = servers.map((server) => new URL(server.url).port)
  const haproxy = await startHaproxy([`127.0.0.1:${apiPorts[0]}`, `127.0.0.1:${apiPorts[1]}`], await freePort())
  t.after(() => stopProcess(haproxy.child))
  const statsPort = haproxy.statsPort

  // The shipped file with each compose name replaced by the local process that stands for it.
  const local: Record<string, string> = { [`petstore-1:${METRICS_PORT}`]: `127.0.0.1:${instancePorts[0]}`, [`petstore-2:${METRICS_PORT}`]: `127.0.0.1:${instancePorts[1]}`, 'haproxy:8404': `127.0.0.1:${statsPort}` }
  let text = readFileSync(join(ROOT, CONFIG), 'utf8').replace('scrape_interval: 15s', 'scrape_interval: 1s')
  for (const [name, address] of Object.entries(local)) text = text.replace(`"${name}"`, `"${address}"`)
  writeFileSync(join(folder, 'prometheus.yml'), text)
  copyFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), join(folder, 'alerts.yml'))
  const port = await freePort()
  const prometheus = spawn('prometheus', [`--config.file=${join(folder, 'prometheus.yml')}`, `--storage.tsdb.path=${join(folder, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  prometheus.stderr.on('data', (chunk: Buffer) => { log = (log + chunk.toString()).slice(-4000) })
  t.after(() => stopProcess(prometheus))

  const api = async <T>(path: string): Promise<T> => ((await (await fetch(`http://127.0.0.1:${port}/api/v1/${path}`)).json()) as { data: T }).data
  type Targets = { activeTargets: Array<{ labels: { job: string, instance: string }, health: string, lastError: string }> }
  let seen: Array<{ job: string, instance: string, health: string, lastError: string }> = []
  for (let tries = 0; tries < 120; tries++) {
    const targets = await api<Targets>('targets').catch(() => ({ activeTargets: [] }))
    seen = targets.activeTargets.map((target) => ({ job: target.labels.job, instance: target.labels.instance, health: target.health, lastError: target.lastError })).sort((a, b) => a.instance.localeCompare(b.instance))
    if (seen.length === 3 && seen.every((target) => target.health === 'up')) break
    assert.ok(prometheus.exitCode === null, `prometheus exited:\n${log}`)
    await sleep(250)
  }
  const expected = [
    { job: 'petstore', instance: local[`petstore-1:${METRICS_PORT}`]!, health: 'up', lastError: '' },
    { job: 'petstore', instance: local[`petstore-2:${METRICS_PORT}`]!, health: 'up', lastError: '' },
    { job: 'haproxy', instance: local['haproxy:8404']!, health: 'up', lastError: '' }
  ].sort((a, b) => a.instance.localeCompare(b.instance))
  assert.deepEqual(seen, expected)

  // What PetstoreMemoryNearLimit divides by, from each instance.
  const limits = await api<{ result: Array<{ metric: { instance: string } }> }>('query?query=petstore_memory_limit_bytes%7Bjob%3D%22petstore%22%7D')
  assert.deepEqual(limits.result.map((series) => series.metric.instance).sort(), [local[`petstore-1:${METRICS_PORT}`], local[`petstore-2:${METRICS_PORT}`]].sort())
  const haproxyUp = await api<{ result: Array<{ metric: { server: string } }> }>('query?query=haproxy_server_status%7Bjob%3D%22haproxy%22%2Cstate%3D%22UP%22%7D')
  assert.deepEqual(haproxyUp.result.map((series) => series.metric.server).sort(), ['petstore-1', 'petstore-2'])

  const rules = await api<{ groups: Array<{ rules: Array<{ type: string, name: string }> }> }>('rules?type=alert')
  const loaded = rules.groups.flatMap((group) => group.rules.map((rule) => rule.name)).sort()
  const shipped = [...readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8').matchAll(/^\s+- alert: (\w+)$/gm)].map((match) => match[1]).sort()
  assert.ok(shipped.includes('PetstoreMemoryNearLimit'))
  assert.deepEqual(loaded, shipped)
})
