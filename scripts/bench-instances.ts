import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { cpus } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { generateApiKey } from '../src/keys.ts'
import { openStore } from '../src/store/index.ts'
import { runLoad, SCENARIOS, type LoadResult } from './bench/load.ts'
import { seedPets } from './bench/seed.ts'
import { freePort } from './bench/servers.ts'

/**
 * Throughput and p99 latency of one vs two instances on one PostgreSQL, for listPets and
 * createPet; a few seconds per scenario, in a schema of its own that is dropped at the end.
 *
 *   npm run bench:instances [-- --seconds 3 --connections 16]
 *
 * BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 * Two instances get half the connections each from two load generators in this process
 * (as a load balancer would split them); their rates add up, and the p99 shown is the worse.
 */

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, connections: { type: 'string', default: '16' } } })
const SECONDS = Number(values.seconds)
const CONNECTIONS = Number(values.connections)
const BASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SCHEMA = `petstore_bench_${randomBytes(4).toString('hex')}`
const DATABASE_URL = (() => { const url = new URL(BASE_URL); url.searchParams.set('schema', SCHEMA); return url.toString() })()
const PETS = 10_000
const MEASURED = SCENARIOS.filter((scenario) => scenario.name === 'list 20' || scenario.name === 'create')

async function startInstance (): Promise<{ url: string, child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['src/server.ts'], {
    // Production settings, but no drain window on stop, rate limits far above what a benchmark
    // sends and no load shedding (a benchmark saturates on purpose); logs go to a sink that costs
    // what a pipe would.
    env: { ...process.env, DATABASE_URL, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', SHUTDOWN_DRAIN_MS: '0', RATE_LIMIT_PER_MINUTE: '1000000000', FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000', MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    if (await fetch(url + '/readyz').then((res) => res.ok, () => false)) return { url, child }
    await sleep(50)
  }
  child.kill()
  throw new Error('an instance did not become ready within 10 s')
}

async function stop (child: ChildProcess) {
  if (child.exitCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

const setup = await openStore(DATABASE_URL)
const instances: Array<{ url: string, child: ChildProcess }> = []
const rows: string[] = []
try {
  await setup.migrate()
  const key = generateApiKey()
  await setup.createApiKey({ name: 'bench', hash: key.hash, prefix: key.prefix })
  // seedPets speaks to PostgreSQL directly: the schema goes in as a search_path.
  await seedPets(DATABASE_URL.replace(/\?.*$/, '') + `?options=${encodeURIComponent(`-c search_path=${SCHEMA}`)}`, PETS)
  if (await setup.countPets() !== PETS) throw new Error(`seeding went elsewhere: ${SCHEMA} has ${await setup.countPets()} pets`)

  const single = new Map<string, number>()
  for (const count of [1, 2]) {
    while (instances.length < count) instances.push(await startInstance())
    // Warm-up (JIT, pools) that does not count.
    await Promise.all(instances.map((instance) => runLoad(instance.url, MEASURED[0]!.build(PETS, key.key), { connections: 2, duration: 1 })))
    for (const scenario of MEASURED) {
      const connections = Math.max(1, Math.round(CONNECTIONS / count))
      const results: LoadResult[] = await Promise.all(instances.map((instance) =>
        runLoad(instance.url, scenario.build(PETS, key.key), { connections, duration: SECONDS })))
      const rps = results.reduce((sum, r) => sum + r.rps, 0)
      const p99 = Math.max(...results.map((r) => r.p99))
      const failed = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
      if (count === 1) single.set(scenario.name, rps)
      const ratio = rps / single.get(scenario.name)!
      rows.push(`| ${scenario.name} | ${count} | ${Math.round(rps)} | ${ratio.toFixed(2)}× | ${p99.toFixed(2)} | ${failed} |`)
      process.stderr.write(`${scenario.name} on ${count} instance(s): ${Math.round(rps)} req/s, p99 ${p99.toFixed(2)} ms, ${failed} failed\n`)
    }
  }
} finally {
  await Promise.all(instances.map((instance) => stop(instance.child)))
  await setup.close()
  const admin = new pg.Client({ connectionString: BASE_URL })
  await admin.connect()
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
  await admin.end()
}

process.stdout.write([
  '',
  `npm run bench:instances -- --seconds ${SECONDS} --connections ${CONNECTIONS}`,
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${PETS} pets, PostgreSQL on the same machine`,
  '',
  '| scenario | instances | req/s | vs 1 instance | p99 ms | failed |',
  '|---|---|---|---|---|---|',
  ...rows,
  ''
].join('\n'))
