import { parseArgs } from 'node:util'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLOCK_DRIVEN, type DumpParts } from './instruction-parts.ts'
import { baselineInstructionsPerRequest, hasCallgrind, instructionsPerRequest, type Instructions } from './instructions.ts'
import { loadGeneratorName, median, readyScenario, runLoad, SCALE_SCENARIOS, SCENARIOS, type LoadResult, type Scenario } from './load.ts'
import { responseHeadersOf, type ResponseHeaders } from './response-headers.ts'
import { prepareStore as prepareAnyStore, serviceEnv, type Prepared } from './store.ts'
import { BASELINE_SCRIPT, canPin, cpuSecondsOf, pinSelfToCore1, REPO_ROOT, rssMb, serviceScript, START_ENV, START_FLAGS, startServer, type BenchServer } from './servers.ts'

/**
 * npm run bench [-- --quick | --scale | --soak | --instructions [--parts]] [--headers] [--rounds N] [--duration S] [--connections C]
 * The service (production settings, on a fresh store) against a bare Fastify route serving the
 * same pets from memory, same load, alternating A/B; medians of each round. --headers adds a
 * third server: the bare route sending the response headers the service sends.
 * --instructions [--parts] counts instead of timing, as bench:ab --instructions does: the
 * instructions a request costs the service, the baseline, and the baseline sending the service's
 * headers, warm, under callgrind (list 20, get by id, 401, or the scenarios named after the
 * options); --parts adds where the event loop's instructions went on each side, what the work
 * done by the clock cost among them, and what object literals defined in V8's runtime cost (a
 * baseline's higher level).
 * DATABASE_URL=postgres://… runs the service on PostgreSQL instead of a fresh SQLite file.
 */
const { values: flags, positionals: names } = parseArgs({
  allowPositionals: true,
  options: {
    instructions: { type: 'boolean', default: false },
    parts: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '60000' },
    requests: { type: 'string', default: '20000' },
    windows: { type: 'string', default: '5' },
    quick: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    soak: { type: 'boolean', default: false },
    headers: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '32' },
    pets: { type: 'string', default: '10000' }
  }
})
const rounds = Number(flags.rounds ?? (flags.quick ? 1 : 3))
const duration = Number(flags.duration ?? (flags.quick ? 1 : 10))
const connections = Number(flags.connections)
const pinned = pinSelfToCore1()

const fmt = (n: number, digits = 0) => Number.isFinite(n) ? n.toFixed(digits) : '-'
// DATABASE_URL=postgres://… puts every store of the run on PostgreSQL.
const prepareStore = (pets: number) => prepareAnyStore(pets, process.env.DATABASE_URL)

/** A run's figures, the server's RSS after it, and the server's CPU time (user + system) per request in µs. */
type Sample = LoadResult & { rss: number, cpuUs: number }

async function measure (server: BenchServer, scenario: Scenario, pets: number, key: string, seconds = duration): Promise<Sample> {
  // Learning tags is not part of the load: done before the server's CPU time is read.
  const ready = await readyScenario(scenario, server.url, pets, key)
  const before = cpuSecondsOf(server.pid)
  const result = await runLoad(server.url, ready, { pets, key, connections, duration: seconds })
  const after = cpuSecondsOf(server.pid)
  const cpuUs = (after.user + after.system - before.user - before.system) * 1e6 / result.requests
  return { ...result, rss: rssMb(server.pid), cpuUs }
}

async function compare () {
  const pets = Number(flags.pets)
  const prepared = await prepareStore(pets)
  const service = await startServer('service', serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS)
  const baseline = await startServer('baseline', BASELINE_SCRIPT, { BENCH_PETS: String(pets) }, '/v1/pets?limit=1')
  // --headers: a third server, the baseline sending the headers the service sends.
  const headered = flags.headers
    ? await startServer('baseline + headers', BASELINE_SCRIPT, { BENCH_PETS: String(pets), BENCH_RESPONSE_HEADERS: JSON.stringify(await responseHeadersOf(service.url, prepared.key)) }, '/v1/pets?limit=1')
    : undefined
  const servers = headered ? [service, baseline, headered] : [service, baseline]
  const samples = new Map<string, Map<BenchServer, Sample[]>>()
  // Warm them up (JIT, caches) before anything counts.
  for (const server of servers) await measure(server, SCENARIOS[0]!, pets, prepared.key, 1)
  for (let round = 0; round < rounds; round++) {
    for (const scenario of SCENARIOS) {
      const entry = samples.get(scenario.name) ?? new Map(servers.map((server) => [server, []]))
      samples.set(scenario.name, entry)
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const sample = await measure(server, scenario, pets, prepared.key)
        entry.get(server)!.push(sample)
        const unexpected = scenario.name === '401' ? 0 : sample.errorStatuses
        if (unexpected > 0 || sample.errors > 0) process.stderr.write(`! ${server.name} ${scenario.name}: ${unexpected} responses of 4xx or 5xx, ${sample.errors} errors\n`)
      }
      process.stderr.write(`round ${round + 1}/${rounds} ${scenario.name} done\n`)
    }
  }
  for (const server of servers) await server.stop()
  await prepared.cleanup()

  const store = prepared.databaseUrl.split(':')[0]
  // Each round's figures compared, then the median: the servers ran within a minute of each other.
  const ratio = (a: Sample[], b: Sample[]) => median(a.map((x, i) => x.rps / b[i]!.rps))
  const mid = (samples: Sample[], field: keyof Sample) => median(samples.map((x) => x[field]))
  console.log(`\n${store}, ${pets} pets, ${connections} connections, ${duration} s × ${rounds} rounds, medians; server on core 0, load on core 1: ${pinned ? 'pinned' : 'not pinned'}`)
  console.log('| scenario | service req/s | baseline req/s | ratio | p50 ms svc / base | p99 ms svc / base | p99 ratio | RSS MB svc / base | CPU µs a request svc / base |')
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const [name, entry] of samples) {
    const s = entry.get(service)!
    const b = entry.get(baseline)!
    // One field's median on each side, "service / baseline".
    const sides = (field: keyof Sample, digits: number) => `${fmt(mid(s, field), digits)} / ${fmt(mid(b, field), digits)}`
    console.log(`| ${name} | ${fmt(mid(s, 'rps'))} | ${fmt(mid(b, 'rps'))} | ${fmt(ratio(s, b), 2)}× | ${sides('p50', 2)} | ${sides('p99', 2)} | ${fmt(mid(s, 'p99') / mid(b, 'p99'), 2)}× | ${sides('rss', 0)} | ${sides('cpuUs', 1)} |`)
  }
  // Start-up beside the bare framework's: on a slow or busy machine both move together.
  console.log(`- ready after spawn: service ${fmt(service.startupMs)} ms, baseline ${fmt(baseline.startupMs)} ms`)
  if (!headered) return
  console.log('\nthe baseline sending the service\'s response headers (the same names and values, set in an onSend hook), measured in the same rounds')
  console.log('| scenario | baseline + headers req/s | baseline + headers / baseline | service / baseline + headers | p99 ms | CPU µs a request |')
  console.log('|---|--:|--:|--:|--:|--:|')
  for (const [name, entry] of samples) {
    const h = entry.get(headered)!
    console.log(`| ${name} | ${fmt(mid(h, 'rps'))} | ${fmt(ratio(h, entry.get(baseline)!), 2)}× | ${fmt(ratio(entry.get(service)!, h), 2)}× | ${fmt(mid(h, 'p99'), 2)} | ${fmt(mid(h, 'cpuUs'), 1)} |`)
  }
}

async function scale () {
  const sizes = flags.quick ? [1_000, 20_000] : [1_000, 1_000_000]
  const results = new Map<string, Map<number, LoadResult[]>>()
  const extra: string[] = []
  // Both stores are served at once and measured in alternation, round by round, as the main
  // comparison does: on a machine whose speed drifts from minute to minute, measuring one size
  // after the other would put the drift into the ratio.
  // Beside each service, one with the reply cache off on the same store: its gets all read
  // the store, which is what shows whether the store itself slows down as it grows (at 1 000
  // pets the cache holds every pet; at 1 000 000 most gets miss it).
  const servers: Array<{ size: number, prepared: Prepared, service: BenchServer, uncached: BenchServer }> = []
  const getScenario = SCALE_SCENARIOS.find((s) => s.name === 'get by id')!
  const measurements = [
    ...SCALE_SCENARIOS.map((scenario) => ({ name: scenario.name, scenario, on: (s: typeof servers[number]) => s.service })),
    { name: 'get by id, reply cache off', scenario: getScenario, on: (s: typeof servers[number]) => s.uncached }
  ]
  // Whatever was made is undone in the end, also when a step fails half-way.
  const stores: Prepared[] = []
  const started: BenchServer[] = []
  const start = async (name: string, env: Record<string, string>) => {
    const server = await startServer(name, serviceScript(), env, '/readyz', START_FLAGS)
    started.push(server)
    return server
  }
  try {
    for (const size of sizes) {
      const prepared = await prepareStore(size)
      stores.push(prepared)
      const startups = await startupTimes(prepared)
      const service = await start(`service@${size}`, serviceEnv(prepared.databaseUrl))
      const uncached = await start(`uncached@${size}`, { ...serviceEnv(prepared.databaseUrl), REPLY_CACHE_ENTRIES: '0' })
      servers.push({ size, prepared, service, uncached })
      extra.push(`${size} pets: ready after spawn in ${fmt(median(startups))} ms, median of ${startups.length} starts (${startups.map((ms) => fmt(ms)).join(', ')})`)
      await measure(service, SCALE_SCENARIOS[0]!, size, prepared.key, 1)
      await measure(uncached, getScenario, size, prepared.key, 1)
    }
    for (let round = 0; round < rounds; round++) {
      for (const { name, scenario, on } of measurements) {
        const row = results.get(name) ?? new Map<number, LoadResult[]>()
        results.set(name, row)
        for (const served of round % 2 === 0 ? servers : [...servers].reverse()) {
          const sample = await measure(on(served), scenario, served.size, served.prepared.key)
          row.set(served.size, [...(row.get(served.size) ?? []), sample])
        }
      }
    }
    for (const { size, prepared, service } of servers) {
      const mix = await measure(service, SCENARIOS.find((s) => s.name === 'mix')!, size, prepared.key)
      extra.push(`${size} pets: RSS under the mix ${fmt(mix.rss)} MB (${fmt(mix.rps)} req/s)`)
    }
  } finally {
    for (const server of started) await server.stop()
    for (const prepared of stores) await prepared.cleanup()
  }
  const [small, large] = sizes as [number, number]
  // The mean latency follows exactly from the throughput at a fixed number of connections
  // (Little's law: latency = connections / throughput), in microseconds.
  const meanUs = (r: LoadResult) => connections / r.rps * 1e6
  // Each round's pair compared, then the median: both sizes ran within a minute of each other.
  const pairRatio = (row: Map<number, LoadResult[]>, of: (r: LoadResult) => number) =>
    median(row.get(large)!.map((r, i) => of(r) / of(row.get(small)![i]!)))
  console.log(`\nscale: ${connections} connections, ${duration} s × ${rounds} rounds, both sizes served at once and measured in alternation, medians (latency in ms; mean from connections ÷ req/s)`)
  console.log(`| scenario | p50 @${small} | p50 @${large} | p50 ratio | p99 @${small} | p99 @${large} | req/s @${small} | req/s @${large} | mean ratio |`)
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|')
  const medianOf = (samples: LoadResult[]): LoadResult => ({ requests: 0, rps: median(samples.map((r) => r.rps)), p50: median(samples.map((r) => r.p50)), p99: median(samples.map((r) => r.p99)), errorStatuses: 0, errors: 0 })
  for (const [name, row] of results) {
    const a = medianOf(row.get(small)!)
    const b = medianOf(row.get(large)!)
    console.log(`| ${name} | ${fmt(a.p50, 3)} | ${fmt(b.p50, 3)} | ${fmt(pairRatio(row, (r) => r.p50), 2)}× | ${fmt(a.p99, 2)} | ${fmt(b.p99, 2)} | ${fmt(a.rps)} | ${fmt(b.rps)} | ${fmt(pairRatio(row, meanUs), 2)}× |`)
  }
  for (const line of extra) console.log(`- ${line}`)
}

/**
 * Start-up on a store, as the median of a few starts: the first start after seeding is
 * the slowest of a series, so a single start would overstate it.
 */
async function startupTimes (prepared: Prepared, starts = flags.quick ? 1 : 5): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < starts; i++) {
    // A failed start is cleaned up by the caller, which owns the store.
    const service = await startServer('service', serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS)
    times.push(service.startupMs)
    await service.stop()
  }
  return times
}

async function soak () {
  const size = flags.quick ? 10_000 : 1_000_000
  const minutes = flags.quick ? 0.2 : 5
  const prepared = await prepareStore(size)
  const service = await startServer('service', serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS)
  const mix = SCENARIOS.find((s) => s.name === 'mix')!
  await measure(service, mix, size, prepared.key, flags.quick ? 1 : 30)
  const samples: number[] = []
  const step = flags.quick ? 2 : 15
  for (let t = 0; t < minutes * 60; t += step) {
    const r = await measure(service, mix, size, prepared.key, step)
    samples.push(r.rss)
    process.stderr.write(`soak ${t + step}s: ${fmt(r.rps)} req/s, RSS ${fmt(r.rss, 1)} MB\n`)
  }
  await service.stop()
  await prepared.cleanup()
  const quarter = Math.max(1, Math.floor(samples.length / 4))
  const first = median(samples.slice(0, quarter))
  const last = median(samples.slice(-quarter))
  console.log(`\nsoak: ${size} pets, mix at ${connections} connections for ${minutes} min: RSS first quarter ${fmt(first, 1)} MB, last quarter ${fmt(last, 1)} MB, growth ${fmt((last / first - 1) * 100, 1)} %, max ${fmt(Math.max(...samples), 1)} MB`)
}

console.log(`bench: node ${process.version}, load: ${loadGeneratorName()}, taskset ${canPin ? 'available' : 'unavailable'}, service started as npm start does: ${Object.entries(START_ENV).map(([name, value]) => `${name}=${value} `).join('')}node ${START_FLAGS.join(' ')} src/server.ts`)
if (flags.instructions) await countBoth()
else if (flags.scale) await scale()
else if (flags.soak) await soak()
else await compare()

/**
 * The service, the baseline, and the baseline sending the service's headers (--headers' third
 * server), counted at once, each warm, on the same scenarios: what the headers the interface and
 * the service promise cost in Fastify and Node alone, and what the service's own work costs
 * beyond them, in instructions rather than time. --parts also tells where the event loop's
 * instructions went on each side (instruction-parts.ts). Always SQLite (instructionsPerRequest
 * copies the seeded file).
 */
async function countBoth () {
  if (!hasCallgrind()) {
    process.stderr.write('bench --instructions needs valgrind (Debian: apt-get install valgrind)\n')
    process.exit(2)
  }
  const [requests, windows] = [Number(flags.requests), Number(flags.windows)]
  if (!(Number.isInteger(windows) && windows >= 1 && requests >= windows)) {
    process.stderr.write('bench: --windows must be a whole number from 1 to --requests\n')
    process.exit(2)
  }
  const counting = { warmup: Number(flags.warmup), windows, perWindow: Math.round(requests / windows), parts: flags.parts }
  const scenarios = (names.length === 0 ? ['list 20', 'get by id', '401'] : names).map((name) => {
    const scenario = SCENARIOS.find((s) => s.name === name)
    if (scenario === undefined) throw new Error(`no scenario "${name}"; there are: ${SCENARIOS.map((s) => s.name).join(', ')}`)
    return scenario
  })
  const pets = Number(flags.pets)
  const prepared = await prepareAnyStore(pets)
  try {
    const storePath = prepared.databaseUrl.slice('sqlite:'.length)
    const headers = await headersOnACopy(storePath, prepared.key)
    const counts: Array<{ name: string, service: Instructions, baseline: Instructions, headered: Instructions }> = []
    for (const scenario of scenarios) {
      const [service, baseline, headered] = await Promise.all([
        instructionsPerRequest(REPO_ROOT, storePath, scenario, pets, prepared.key, counting),
        baselineInstructionsPerRequest(scenario, pets, prepared.key, counting),
        baselineInstructionsPerRequest(scenario, pets, prepared.key, counting, headers)
      ])
      counts.push({ name: scenario.name, service, baseline, headered })
    }
    console.log(`service against the baseline, bare and sending the service's headers; ${pets} pets; instructions a request under callgrind, the median of ${counting.windows} windows of ${counting.perWindow} requests after ${counting.warmup} uncounted`)
    for (const [title, of] of [['every thread', (i: Instructions) => i.all], ['the event loop', (i: Instructions) => i.eventLoop]] as const) {
      console.log(`\n${title}`)
      console.log('| scenario | service | baseline | baseline + headers | service ÷ baseline | baseline + headers ÷ baseline | service ÷ baseline + headers |')
      console.log('|---|--:|--:|--:|--:|--:|--:|')
      for (const { name, service, baseline, headered } of counts) {
        console.log(`| ${name} | ${fmt(of(service))} | ${fmt(of(baseline))} | ${fmt(of(headered))} | ${(of(service) / of(baseline)).toFixed(2)} | ${(of(headered) / of(baseline)).toFixed(2)} | ${(of(service) / of(headered)).toFixed(2)} |`)
      }
    }
    if (flags.parts) for (const { name, service, baseline, headered } of counts) printParts(name, service.parts!, baseline.parts!, headered.parts!)
  } finally {
    await prepared.cleanup()
  }
}

/**
 * The headers the service sends, asked of it on a copy of the store (asking makes one pet):
 * the counted service then serves the store as seeded.
 */
async function headersOnACopy (storePath: string, key: string): Promise<ResponseHeaders> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-headers-'))
  try {
    copyFileSync(storePath, join(dir, 'petstore.db'))
    const service = await startServer('service', serviceScript(), serviceEnv(`sqlite:${join(dir, 'petstore.db')}`), '/readyz', START_FLAGS)
    try {
      return await responseHeadersOf(service.url, key)
    } finally {
      await service.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Where one scenario's event loop instructions went on each side, a request, largest first on
 * the service; then the clock-driven work among them, and the object literals defined in V8's
 * runtime.
 */
function printParts (scenario: string, serviceParts: DumpParts, baselineParts: DumpParts, headeredParts: DumpParts) {
  const sides = [serviceParts, baselineParts, headeredParts]
  const owns = sides.map(({ own }) => own)
  console.log(`\n${scenario}: the event loop's instructions a request by part, each function's own (instruction-parts.ts)`)
  console.log('| part | service | baseline | baseline + headers |')
  console.log('|---|--:|--:|--:|')
  const all = [...new Set(owns.flatMap((side) => [...side.keys()]))]
  const rows = all.map((part) => ({ part, counts: owns.map((side) => side.get(part) ?? 0) }))
    .filter(({ counts }) => counts.some((count) => count >= 100))
    .sort((a, b) => b.counts[0]! - a.counts[0]! || b.counts[2]! - a.counts[2]!)
  for (const { part, counts } of rows) console.log(`| ${part} | ${counts.map((count) => fmt(count)).join(' | ')} |`)
  const total = (side: Map<string, number>) => fmt([...side.values()].reduce((sum, count) => sum + count, 0))
  console.log(`| all (parts under 100 too) | ${owns.map(total).join(' | ')} |`)
  console.log(`\n${scenario}: clock-driven work, with all it calls, counted in the parts above (instruction-parts.ts, CLOCK_DRIVEN)`)
  console.log('| work | service | baseline | baseline + headers |')
  console.log('|---|--:|--:|--:|')
  for (const [, kind] of CLOCK_DRIVEN) console.log(`| ${kind} | ${sides.map(({ clockDriven }) => fmt(clockDriven.get(kind)!)).join(' | ')} |`)
  console.log(`\n${scenario}: object literals whose properties V8 defined in its runtime, with all it calls, counted in the parts above (instruction-parts.ts, LITERALS_IN_RUNTIME); thousands or more: that side counted at its higher level`)
  console.log('| service | baseline | baseline + headers |')
  console.log('|--:|--:|--:|')
  console.log(`| ${sides.map(({ literalsInRuntime }) => fmt(literalsInRuntime)).join(' | ')} |`)
}
