import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { loadGeneratorCpuSeconds, loadGeneratorName, median, runLoad, SCENARIOS, type LoadResult, type Scenario } from './load.ts'
import { prepareStore, serviceEnv } from './store.ts'
import { serviceScript, START_FLAGS, startServer, type BenchServer } from './servers.ts'

/**
 * Throughput and p99 latency of one vs two instances on one store, for list 20, get by id,
 * create and the mix; a few seconds per scenario, on a fresh store that is removed at the end:
 * a schema of its own in PostgreSQL, or a SQLite file that both instances open (WAL lets
 * processes share it).
 *
 *   npm run bench:instances [-- --store postgres|sqlite --seconds 3 --rounds 3 --connections 16]
 *
 * PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 * Two instances get half the connections each from two load generators (two wrk processes, or
 * two autocannon runs in this process: see loadGenerator in load.ts)
 * (as a load balancer would split them); their rates add up, and the p99 shown is the worse.
 * Nothing is pinned to a core: instances, store and load generator share the machine's cores,
 * which is what a second instance (or a cluster worker) on the same machine would get.
 */

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'postgres' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' }
  }
})
if (values.store !== 'postgres' && values.store !== 'sqlite') throw new Error(`--store must be postgres or sqlite, not ${values.store}`)
const SECONDS = Number(values.seconds)
const CONNECTIONS = Number(values.connections)
const ROUNDS = Number(values.rounds)
const POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const PETS = 10_000
const MEASURED = SCENARIOS.filter((scenario) => ['list 20', 'get by id', 'create', 'mix'].includes(scenario.name))

const prepared = await prepareStore(PETS, values.store === 'postgres' ? POSTGRES_URL : undefined)
const instances: BenchServer[] = []
// Per scenario and instance count, each round's req/s and p99 (the worse instance's).
const samples = new Map<string, { rps: number[], p99: number[], loadCpu: number[], failed: number }>()

/** All connections on the first `count` instances, split evenly: their rates add up. */
async function measure (scenario: Scenario, count: number) {
  const connections = Math.max(1, Math.round(CONNECTIONS / count))
  // The load generator's own CPU: near a whole core, it is what limits the figure, not the instances.
  const cpuBefore = loadGeneratorCpuSeconds()
  const results: LoadResult[] = await Promise.all(instances.slice(0, count).map((instance) =>
    runLoad(instance.url, scenario, { pets: PETS, key: prepared.key, connections, duration: SECONDS })))
  const cpu = loadGeneratorCpuSeconds() - cpuBefore
  const entry = samples.get(`${scenario.name}|${count}`) ?? { rps: [], p99: [], loadCpu: [], failed: 0 }
  samples.set(`${scenario.name}|${count}`, entry)
  entry.rps.push(results.reduce((sum, r) => sum + r.rps, 0))
  entry.p99.push(Math.max(...results.map((r) => r.p99)))
  entry.loadCpu.push(cpu / SECONDS)
  entry.failed += results.reduce((sum, r) => sum + r.errorStatuses + r.errors, 0)
}

try {
  // Both instances run throughout; one instance's figure loads only the first, the other idles.
  // Started as npm start starts the service (its Node flags and environment), not pinned.
  for (const name of ['instance 1', 'instance 2']) instances.push(await startServer(name, serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS, [], { pinned: false }))
  // Warm-up (JIT, caches, pools) that does not count.
  for (const scenario of MEASURED) await Promise.all(instances.map((instance) => runLoad(instance.url, scenario, { pets: PETS, key: prepared.key, connections: 4, duration: 1 })))
  // One instance and two alternate within each round, so the machine's drift falls on both.
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of MEASURED) {
      for (const count of round % 2 === 0 ? [1, 2] : [2, 1]) await measure(scenario, count)
      process.stderr.write(`round ${round + 1}/${ROUNDS} ${scenario.name} done\n`)
    }
  }
} finally {
  await Promise.all(instances.map((instance) => instance.stop()))
  await prepared.cleanup()
}

const rows: string[] = []
for (const count of [1, 2]) {
  for (const scenario of MEASURED) {
    const { rps, p99, loadCpu, failed } = samples.get(`${scenario.name}|${count}`)!
    const single = samples.get(`${scenario.name}|1`)!.rps
    // The median of each round's ratio: both counts ran within seconds of each other.
    const ratio = median(rps.map((r, i) => r / single[i]!))
    rows.push(`| ${scenario.name} | ${count} | ${Math.round(median(rps))} | ${ratio.toFixed(2)}× | ${median(p99).toFixed(2)} | ${Math.round(median(loadCpu) * 100)} % | ${failed} |`)
  }
}

process.stdout.write([
  '',
  `npm run bench:instances -- --store ${values.store} --seconds ${SECONDS} --rounds ${ROUNDS} --connections ${CONNECTIONS}`,
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${PETS} pets, ${values.store === 'postgres' ? 'PostgreSQL on the same machine' : 'one SQLite file'}; instances started as npm start does; nothing pinned; load: ${loadGeneratorName()}`,
  '',
  '| scenario | instances | req/s (median) | vs 1 instance (median of the rounds) | p99 ms (median) | load generator, share of one core | failed |',
  '|---|---|---|---|---|---|---|',
  ...rows,
  ''
].join('\n'))
