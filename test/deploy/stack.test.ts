import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, createServer } from 'node:http'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { probePostgres, probeRedis } from '../../scripts/service-probes.ts'
import { ConfigSchema, loadConfig, SECRETS } from '../../src/config.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { haproxyServerSetting, haproxyTakesOutMs, instanceEnvironment, interpolate, readCompose, readComposeDocument, readComposeFile, withoutSecrets, type Compose } from '../helpers/compose.ts'
import { freePort, HAPROXY_CFG, haproxyMissing, startHaproxy, unavailable } from '../helpers/haproxy.ts'
import { listAll, samePet } from '../helpers/load.ts'
import { freshSchema, TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { runCli, runToExit, stopProcess } from '../helpers/processes.ts'
import { send, startServer, type ServerProcess } from '../helpers/server-process.ts'
import { percentile, startLoad } from '../helpers/stack-load.ts'

/**
 * compose.yaml's topology with real processes: haproxy on deploy/haproxy/haproxy.cfg in front
 * of two src/server.ts on one PostgreSQL schema and Redis. The whole API works through the
 * balancer (petstore probe), and a rolling restart of both instances under steady load loses
 * no request and no acknowledged pet.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const WORKERS = 8
// Load before the first restart and after the last, so both ends of the restart see traffic.
const STEADY_MS = 1000
// A start on a busy shared machine can take many seconds; the restarts wait for it under load.
const START_TIMEOUT_MS = 60_000

const SERVICES = ['haproxy', 'migrate', 'petstore-1', 'petstore-2', 'postgres', 'redis']
// Started only with their profile: docker compose --profile NAME.
const PROFILED = { backup: ['backup'], prometheus: ['monitoring'] }
// The URL compose's secret holds, in a file of its own for the tests that load the instances' settings.
const COMPOSE_DATABASE_URL = 'postgres://petstore:secret@postgres:5432/petstore?schema=petstore'
const SECRET_FILES = { '/run/secrets/database-url': secretFile('database-url', COMPOSE_DATABASE_URL) }

function secretFile (name: string, content: string): string {
  const path = join(tmpdir(), `petstore-stack-${process.pid}-${name}`)
  writeFileSync(path, `${content}\n`, { mode: 0o600 })
  process.on('exit', () => { try { rmSync(path) } catch {} })
  return path
}

/** A service's environment as compose gives it, its secrets' paths moved to the files that stand for them here. */
function withSecrets (environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, SECRET_FILES[value as keyof typeof SECRET_FILES] ?? value]))
}

test('compose.yaml: two instances behind haproxy on the tested haproxy.cfg, PostgreSQL 17, Redis 7, migrate first, a drain longer than the health checks take', () => {
  const services = readCompose()
  assert.deepEqual(Object.keys(services).filter((name) => !(name in PROFILED)).sort(), SERVICES)
  assert.deepEqual(Object.fromEntries(Object.keys(PROFILED).map((name) => [name, services[name]?.profiles])), PROFILED)
  assert.equal(services.postgres!.image, 'docker.io/library/postgres:17')
  assert.equal(services.redis!.image, 'docker.io/library/redis:7')

  const migrate = services.migrate!
  assert.deepEqual({ build: migrate.build, entrypoint: migrate.entrypoint, command: migrate.command }, { build: '.', entrypoint: ['node', 'src/cli.ts'], command: ['migrate'] })

  const haproxy = services.haproxy!
  assert.deepEqual(haproxy.volumes, [`./${HAPROXY_CFG}:/usr/local/etc/haproxy/haproxy.cfg:ro`], 'compose runs the haproxy.cfg the stack test runs')
  assert.ok(haproxy.ports?.map((port) => interpolate(port)).includes('127.0.0.1:8080:8080'), 'the API is on port 8080')
  // The defaults of haproxy.cfg's addresses are compose's services.
  const cfg = readFileSync(new URL(`../../${HAPROXY_CFG}`, import.meta.url), 'utf8')
  assert.match(cfg, /server petstore-1 "\$\{PETSTORE_1-petstore-1:8080\}"/)
  assert.match(cfg, /server petstore-2 "\$\{PETSTORE_2-petstore-2:8080\}"/)
  assert.match(cfg, /bind "\$\{PETSTORE_BIND-:8080\}"/)

  assert.deepEqual(services['petstore-2'], services['petstore-1'], 'the two instances are alike')
  const instance = services['petstore-1']!
  assert.equal(instance.build, undefined, 'only migrate builds: podman-compose would build the same image once for each service that has a build')
  assert.ok(instance.image, 'the instances name their image')
  assert.equal(migrate.image, instance.image, 'migrate and the instances run one image, built once')
  assert.deepEqual(instance.depends_on, {
    migrate: { condition: 'service_completed_successfully' },
    postgres: { condition: 'service_healthy' },
    redis: { condition: 'service_healthy' }
  })
  const environment = instanceEnvironment(instance)
  const reads = (name: string) => Object.hasOwn(ConfigSchema.properties, name) || SECRETS.some((secret) => name === `${secret}_FILE`)
  assert.deepEqual(Object.keys(environment).filter((name) => !reads(name)), [], 'every variable is one the service reads')
  assert.equal(instanceEnvironment(migrate).DATABASE_URL_FILE, environment.DATABASE_URL_FILE, 'migrate migrates the instances\' database')
  assert.deepEqual(migrate.secrets, instance.secrets)
  const config = loadConfig(withSecrets(environment))
  assert.deepEqual({ host: config.HOST, port: config.PORT, redis: config.REDIS_URL, publicUrl: config.PUBLIC_URL }, { host: '0.0.0.0', port: 8080, redis: 'redis://redis:6379', publicUrl: 'http://localhost:8080/v1' })
  assert.equal(config.DATABASE_URL, COMPOSE_DATABASE_URL)
  assert.ok(config.TRUST_PROXY, 'X-Forwarded-For from haproxy is trusted')
  assert.ok(config.SHUTDOWN_DRAIN_MS > haproxyTakesOutMs(), `SHUTDOWN_DRAIN_MS ${config.SHUTDOWN_DRAIN_MS} must exceed haproxy's inter x fall (${haproxyTakesOutMs()} ms)`)
  const graceS = Number(/^(\d+)s$/.exec(instance.stop_grace_period ?? '')?.[1])
  assert.ok(graceS * 1000 > config.SHUTDOWN_TIMEOUT_MS, `stop_grace_period ${instance.stop_grace_period} must exceed SHUTDOWN_TIMEOUT_MS ${config.SHUTDOWN_TIMEOUT_MS}`)
})

test('compose.yaml: the instances trust haproxy\'s fixed address alone, one hop, and put no per-address cap behind it; the API is published on 127.0.0.1 unless PETSTORE_PUBLISH_ADDRESS says otherwise', () => {
  const compose = readComposeDocument()
  const instance = compose.services['petstore-1']!
  const config = loadConfig(withSecrets(instanceEnvironment(instance)))

  // haproxy has a fixed address on the network compose makes, outside the range compose hands out.
  const balancer = compose.services.haproxy!.networks?.default?.ipv4_address
  const [ipam] = compose.networks?.default?.ipam?.config ?? []
  assert.ok(balancer && ipam?.subnet && ipam.ip_range, 'haproxy has a fixed address on the default network, which has a subnet and an ip_range')
  assert.ok(inSubnet(balancer, ipam.subnet), `${balancer} is in ${ipam.subnet}`)
  assert.ok(!inSubnet(balancer, ipam.ip_range), `${balancer} is outside the ip_range ${ipam.ip_range}, which compose gives to other containers`)
  assert.equal(config.TRUST_PROXY, balancer, 'the instances trust haproxy\'s address and nothing else')

  // Every connection an instance gets comes from haproxy's one address.
  const perAddress = config.MAX_CONNECTIONS_PER_ADDRESS
  assert.ok(perAddress === 0 || perAddress > haproxyServerSetting('maxconn'), `MAX_CONNECTIONS_PER_ADDRESS ${perAddress} would refuse haproxy's own connections (maxconn ${haproxyServerSetting('maxconn')})`)

  const api = compose.services.haproxy!.ports?.find((port) => port.endsWith(':8080:8080'))
  assert.ok(api, 'the API is published on port 8080')
  assert.equal(interpolate(api), '127.0.0.1:8080:8080')
  assert.equal(interpolate(api, { PETSTORE_PUBLISH_ADDRESS: '0.0.0.0' }), '0.0.0.0:8080:8080')
})

test('compose.yaml: the password is in no environment: PostgreSQL and every service that connects read it from a compose secret, a file', () => {
  const compose = readComposeDocument()
  assert.deepEqual(compose.secrets, { 'postgres-password': { file: './secrets/postgres-password' }, 'database-url': { file: './secrets/database-url' } })
  const secretsOf = Object.fromEntries(Object.entries(compose.services).flatMap(([name, service]) => service.secrets ? [[name, service.secrets]] : []))
  assert.deepEqual(secretsOf, { postgres: ['postgres-password'], migrate: ['database-url'], 'petstore-1': ['database-url'], 'petstore-2': ['database-url'], backup: ['database-url'] })
  for (const [name, service] of Object.entries(compose.services)) {
    const environment = instanceEnvironment(service)
    assert.ok(!('DATABASE_URL' in environment) && !('POSTGRES_PASSWORD' in environment), `${name} has no password in its environment`)
    for (const [variable, path] of Object.entries(environment).filter(([variable]) => variable.endsWith('_FILE'))) {
      assert.ok(service.secrets?.some((secret) => path === `/run/secrets/${secret}`), `${name}'s ${variable} names one of its secrets`)
    }
  }
  // The only variables left are ones with a safe default.
  assert.deepEqual([...new Set(readComposeFile().match(/\$\{\w+/g))].sort(), ['${PETSTORE_PUBLISH_ADDRESS', '${PUBLIC_URL'])
})

test('compose.yaml: every service has a memory and a CPU limit; the instances\' leaves room above what they use at most, and is what the docs say', () => {
  const services = readCompose()
  const limits = Object.fromEntries(Object.entries(services).map(([name, service]) => [name, { memory: service.mem_limit, cpus: service.cpus }]))
  for (const [name, limit] of Object.entries(limits)) assert.ok(/^\d+[mg]$/.test(String(limit.memory)) && Number(limit.cpus) > 0, `${name}: ${JSON.stringify(limit)}`)
  const bytes = (limit: string) => Number(limit.slice(0, -1)) * (limit.endsWith('g') ? 1024 ** 3 : 1024 ** 2)
  const instance = services['petstore-1']!
  // PetstoreMemoryNearLimit fires at 90 % of it; under it must fit the resident memory the
  // performance targets allow (150 MB under load) with the reply cache full.
  const replyCache = loadConfig(withSecrets(instanceEnvironment(instance))).REPLY_CACHE_MAX_BYTES
  assert.ok(bytes(instance.mem_limit!) * 0.9 > 150 * 1000 ** 2 + replyCache, `mem_limit ${instance.mem_limit}`)
  const documented = /\| `petstore-1`, `petstore-2` \| (\d+) MiB \| ([\d.]+) \|/.exec(readFileSync(new URL('../../docs/operations/instances.md', import.meta.url), 'utf8'))
  assert.deepEqual([Number(documented?.[1]), Number(documented?.[2])], [bytes(instance.mem_limit!) / 1024 ** 2, instance.cpus], 'instances.md gives the instances\' limits')
})

test('compose.yaml: the backup profile runs petstore backup --dir into its volume, on the postgres image of the compose PostgreSQL\'s version, for its pg_dump', () => {
  const services = readCompose()
  const backup = services.backup!
  assert.deepEqual({ build: backup.build, image: backup.image, command: backup.command, volumes: backup.volumes, depends_on: backup.depends_on, environment: backup.environment }, {
    build: { context: '.', target: 'backup' },
    image: 'localhost/petstore-backup:latest',
    command: ['backup', '--dir', '/backups', '--keep', '7', '--keep-daily', '7'],
    volumes: ['backups:/backups'],
    depends_on: { postgres: { condition: 'service_healthy' } },
    environment: { DATABASE_URL_FILE: '/run/secrets/database-url' }
  })
  const containerfile = readFileSync(new URL('../../Containerfile', import.meta.url), 'utf8')
  assert.equal(/^ARG POSTGRES_IMAGE=(\S+)$/m.exec(containerfile)?.[1], services.postgres!.image, 'pg_dump is the server\'s major version')
  assert.match(containerfile, /^FROM \$\{POSTGRES_IMAGE\} AS backup$/m)
  assert.match(containerfile, /^ENTRYPOINT \["node", "src\/cli\.ts"\]\nCMD \["backup", "--dir", "\/backups", "--keep", "7", "--keep-daily", "7"\]$/m)
})

test('compose.yaml: the backup service\'s command, with its settings and the URL in its secret file, dumps a PostgreSQL schema into its folder', async (t) => {
  if (unavailable(t, `PostgreSQL at ${TEST_DATABASE_URL}`, await probePostgres(TEST_DATABASE_URL))) return
  const backup = readCompose().backup!
  const { url } = freshSchema(t)
  assert.equal((await runCli(['migrate'], { DATABASE_URL: url })).code, 0)
  const folder = mkdtempSync(join(tmpdir(), 'petstore-compose-backup-'))
  t.after(() => rmSync(folder, { recursive: true, force: true }))
  // The service's paths moved here: its secret to a file holding the test schema's URL, /backups to a temporary folder.
  const secret = join(folder, 'database-url')
  writeFileSync(secret, `${url}\n`, { mode: 0o600 })
  const environment = Object.fromEntries(Object.entries(instanceEnvironment(backup)).map(([name, value]) => [name, value === '/run/secrets/database-url' ? secret : value]))
  const dumps = join(folder, 'backups')
  const run = await runCli(backup.command!.map((arg) => arg === '/backups' ? dumps : arg), { ...environment, DATABASE_URL: '' })
  const [dump] = readdirSync(dumps)
  assert.match(dump ?? '', /^petstore-\d{8}T\d{6}Z\.dump$/)
  assert.deepEqual({ ...run, stdout: run.stdout.replace(/\([^)]*\)/, '(…)') }, {
    code: 0,
    stdout: `backed up ${url} to ${join(dumps, dump!)} (…): 0 pets, 0 keys, migration ${loadMigrations('postgres').at(-1)!.version}; pg_restore --list ok; removed no older backup\n`,
    stderr: ''
  })
  assert.equal(statSync(join(dumps, dump!)).mode & 0o777, 0o600)
})

test('compose.yaml: no top-level name, which Debian 12\'s docker-compose 1.29 rejects; the PostgreSQL volume keeps the name it had under it', () => {
  const compose = readComposeDocument() as Compose & { name?: string, volumes?: Record<string, { name?: string } | null> }
  assert.equal(compose.name, undefined)
  assert.deepEqual(compose.volumes, {
    'postgres-data': { name: 'petstore_postgres-data' },
    'prometheus-data': { name: 'petstore_prometheus-data' },
    backups: { name: 'petstore_backups' }
  })
})

test('compose.yaml: Debian 12\'s docker-compose 1.29 reads it, and podman-compose builds the image once', async (t) => {
  const missing = ['docker-compose', 'podman-compose'].find((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
  if (unavailable(t, 'compose tools', missing && `${missing} is missing: install it with apt-get install -y docker-compose podman-compose`)) return
  // docker-compose 1.29 lists the services of every profile; `up` starts those of none.
  const config = spawnSync('docker-compose', ['-f', 'compose.yaml', 'config', '--services'], { cwd: ROOT, encoding: 'utf8' })
  assert.deepEqual({ status: config.status, stderr: config.stderr, services: config.stdout.split('\n').filter(Boolean).sort() },
    { status: 0, stderr: '', services: [...SERVICES, ...Object.keys(PROFILED)].sort() })
  // --dry-run prints the podman commands it would run, and runs none: the service's image once,
  // and the backup stage's.
  const build = spawnSync('podman-compose', ['-f', 'compose.yaml', '--dry-run', 'build'], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(build.status, 0, build.stderr)
  assert.deepEqual(build.stdout.split('\n').filter((line) => line.startsWith('podman build')), [
    'podman build -t localhost/petstore:latest -f ./Containerfile .',
    'podman build -t localhost/petstore-backup:latest -f ./Containerfile --target backup .'
  ])
})

test('compose.yaml: the instances\' healthcheck is the image\'s HEALTHCHECK: node asks /healthz, exit 0 for 200, 1 for anything else', async (t) => {
  const instance = readCompose()['petstore-1']!
  const healthcheck = instance.healthcheck
  assert.ok(healthcheck, 'compose declares the instances\' healthcheck (an image built in OCI format has none)')
  const containerfile = readFileSync(new URL('../../Containerfile', import.meta.url), 'utf8')
  const options = /^HEALTHCHECK (.*)\\$/m.exec(containerfile)?.[1] ?? ''
  const option = (name: string) => new RegExp(`--${name}=(\\w+)`).exec(options)?.[1]
  assert.deepEqual(
    { interval: healthcheck.interval, timeout: healthcheck.timeout, start_period: healthcheck.start_period, retries: String(healthcheck.retries) },
    { interval: option('interval'), timeout: option('timeout'), start_period: option('start-period'), retries: option('retries') })
  const [form, program, flag, script] = healthcheck.test
  assert.deepEqual([form, program, flag], ['CMD', 'node', '-e'])
  assert.match(script ?? '', /\/healthz\b/)
  assert.doesNotMatch(script ?? '', /\$/, 'compose would read a $ as one of its variables')
  const probeExit = async (status: number) => {
    const server = createServer((request, response) => { response.statusCode = request.url === '/healthz' ? status : 404; response.end() })
    const port = await listen(t, server)
    return (await runToExit(['-e', script!], { PORT: String(port) })).code
  }
  assert.deepEqual({ healthy: await probeExit(200), failing: await probeExit(503) }, { healthy: 0, failing: 1 })
})

test('through haproxy the whole API works, and a rolling restart of both instances under load fails no request and loses no acknowledged pet', { timeout: 240_000 }, async (t) => {
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  if (unavailable(t, `PostgreSQL at ${TEST_DATABASE_URL}`, await probePostgres(TEST_DATABASE_URL))) return
  if (unavailable(t, `Redis at ${TEST_REDIS_URL}`, await probeRedis(TEST_REDIS_URL))) return

  const running = new Set<{ stop(): Promise<unknown> }>()
  // Stopped last started first: the load, haproxy, the instances. Registered before the
  // schema's drop, so all have stopped when it runs.
  t.after(async () => { for (const child of [...running].reverse()) await child.stop() })
  const { url: databaseUrl } = freshSchema(t)
  const migrated = await runCli(['migrate'], { DATABASE_URL: databaseUrl })
  assert.equal(migrated.code, 0, migrated.stderr)
  const created = await runCli(['keys', 'create', '--name', 'stack'], { DATABASE_URL: databaseUrl })
  assert.equal(created.code, 0, created.stderr)
  const key = created.stdout.trim()

  const ports = [await freePort(), await freePort()] as const
  const haproxyPort = await freePort()
  // compose's DATABASE_URL_FILE names a secret; the test schema's URL replaces it.
  const composeEnvironment = withoutSecrets(instanceEnvironment(readCompose()['petstore-1']!))
  const env = {
    ...composeEnvironment,
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `petstore-stack-${randomBytes(4).toString('hex')}:`,
    HOST: '127.0.0.1',
    TRUST_PROXY: '127.0.0.1',
    // The load is far above one key's limit; load shedding would refuse it with 503 by design
    // on a shared test machine.
    RATE_LIMIT_PER_MINUTE: '100000000',
    MAX_EVENT_LOOP_DELAY_MS: '0'
  }
  const instances: ServerProcess[] = []
  const start = async (i: 0 | 1) => {
    const server = await startServer({ ...env, PORT: String(ports[i]), PUBLIC_URL: `http://127.0.0.1:${haproxyPort}/v1` }, START_TIMEOUT_MS)
    running.add(server)
    instances[i] = server
  }
  await Promise.all([start(0), start(1)])
  const haproxy = await startHaproxy([`127.0.0.1:${ports[0]}`, `127.0.0.1:${ports[1]}`], haproxyPort)
  running.add({ stop: () => stopProcess(haproxy.child) })
  await haproxy.waitUp('petstore-1')
  await haproxy.waitUp('petstore-2')
  const baseUrl = `http://127.0.0.1:${haproxy.port}/v1`

  const probe = await runCli(['probe', baseUrl, '--key', key], {})
  assert.equal(probe.code, 0, `${probe.stdout}${probe.stderr}`)

  const load = startLoad(haproxy.port, key, WORKERS)
  running.add(load)
  await sleep(STEADY_MS)
  const restartStarted = performance.now()
  const steps: string[] = []
  for (const i of [0, 1] as const) {
    const name = `petstore-${i + 1}`
    const signalled = performance.now()
    const exit = await instances[i]!.stop('SIGTERM')
    running.delete(instances[i]!)
    assert.deepEqual(exit, { code: 0, signal: null }, instances[i]!.logTail())
    const exited = performance.now()
    await start(i)
    const listening = performance.now()
    const servedBefore = Number((await haproxy.stats()).get(name)?.hrsp_2xx)
    await haproxy.waitUp(name)
    steps.push(`${name}: drained and exited in ${ms(exited - signalled)}, listening after ${ms(listening - exited)}, in rotation after ${ms(performance.now() - listening)}`)
    // The restarted instance serves before the other one goes: never a single instance left.
    await sleep(STEADY_MS)
    assert.ok(Number((await haproxy.stats()).get(name)?.hrsp_2xx) > servedBefore, `${name} got no traffic once back in rotation`)
  }
  const restartEnded = performance.now()
  await load.stop()

  const during = load.samples.filter((sample) => sample.startedAt >= restartStarted && sample.startedAt <= restartEnded)
  const backend = (await haproxy.stats()).get('BACKEND')
  for (const step of steps) t.diagnostic(step)
  t.diagnostic(`requests sent ${load.samples.length}, failed ${load.failures.length}; during the rolling restart (${ms(restartEnded - restartStarted)}): ` +
    `${during.length} requests, p50 ${ms(percentile(during, 0.5))}, p99 ${ms(percentile(during, 0.99))}, max ${ms(percentile(during, 1))}; ` +
    `haproxy retried ${backend?.wretr} and redispatched ${backend?.wredis}`)
  assert.deepEqual(load.failures, [])

  const agent = new Agent({ keepAlive: true })
  const stored = await listAll(agent, haproxy.port, key)
  agent.destroy()
  const lost = [...load.acknowledged].filter(([id, pet]) => !samePet(stored.get(id), pet))
  assert.deepEqual(lost, [], `${lost.length} of ${load.acknowledged.size} acknowledged pets are missing or changed`)
  t.diagnostic(`acknowledged pets ${load.acknowledged.size}, all found through the balancer`)
})

test('haproxy sends a request that got no response to the other instance, except a create without an Idempotency-Key, which is sent once', async (t) => {
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  // Two instances that are ready, and that close the connection on any other request without a word.
  const attempts: string[] = []
  const silent = async (name: string) => {
    const server = createServer((request, response) => {
      if (request.url === '/readyz') return response.end('{"status":"ready"}')
      attempts.push(`${name} ${request.method} ${request.headers['idempotency-key'] ?? ''}`.trim())
      request.socket.destroy()
    })
    return `127.0.0.1:${await listen(t, server)}`
  }
  const haproxy = await startHaproxy([await silent('petstore-1'), await silent('petstore-2')], await freePort())
  t.after(() => stopProcess(haproxy.child))
  await haproxy.waitUp('petstore-1')
  await haproxy.waitUp('petstore-2')
  // A connection per request: each is the first on its connection, which haproxy gives 502
  // when it gives up (a later one would see its connection closed instead).
  const agent = new Agent({ keepAlive: false })
  const request = async (method: string, headers: Record<string, string> = {}) => {
    attempts.length = 0
    const response = await send(agent, haproxy.port, method, '/v1/pets', headers, method === 'POST' ? '{}' : undefined)
    return { status: response.status, attempts: [...attempts].sort() }
  }
  // retries 3 with option redispatch 1: four attempts, alternating between the two instances.
  const everyAttempt = (what: string) => ['petstore-1', 'petstore-1', 'petstore-2', 'petstore-2'].map((name) => `${name} ${what}`)
  assert.deepEqual(await request('GET'), { status: 502, attempts: everyAttempt('GET') })
  assert.deepEqual(await request('POST', { 'idempotency-key': 'k1' }), { status: 502, attempts: everyAttempt('POST k1') })
  const once = await request('POST')
  assert.deepEqual({ status: once.status, attempts: once.attempts.length }, { status: 502, attempts: 1 }, 'a create without an Idempotency-Key is never sent twice')
})

async function listen (t: TestContext, server: ReturnType<typeof createServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return (server.address() as { port: number }).port
}

function inSubnet (address: string, cidr: string): boolean {
  const [network = '', bits = '32'] = cidr.split('/')
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0
  return ((ipv4(address) & mask) >>> 0) === ((ipv4(network) & mask) >>> 0)
}

const ipv4 = (address: string) => address.split('.').reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0)

const ms = (value: number) => `${Math.round(value)} ms`
