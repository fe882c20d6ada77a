import autocannon from 'autocannon'
import { encodeCursor } from '../../src/contract/int64.ts'
import { revalidateGet, revalidateList } from './revalidate.ts'
import { procStatFields, TICKS_PER_SECOND } from './servers.ts'
import { luaString, runWrk, wrkVersion } from './wrk.ts'

/**
 * A scenario's requests, for either load generator: autocannon's request list, and a wrk
 * script (Lua) that makes the same requests, random ids and bodies included. A scenario whose
 * requests depend on what the server replies (a tag to revalidate) has `prepare`: it asks the
 * server at `url` and returns the scenario ready to run there (readyScenario).
 */
export interface Scenario {
  name: string
  build(pets: number, key: string): autocannon.Request[]
  lua(pets: number, key: string): string
  prepare?(url: string, pets: number, key: string): Promise<Scenario>
}
/**
 * Responses counted, throughput, and the latency percentiles of every response in milliseconds
 * (fractional). `errorStatuses` counts the responses with a status of 400 or more, as wrk counts them:
 * a 304 is what a revalidation expects.
 */
export interface LoadResult { requests: number, rps: number, p50: number, p99: number, errorStatuses: number, errors: number }

const get = (path: string, key?: string): autocannon.Request =>
  ({ method: 'GET', path, headers: key ? { authorization: `Bearer ${key}` } : {} })

const createBody = (i: number) => JSON.stringify({ name: `bench-${i}`, categoryId: i % 50, status: 'available' })
const create = (key: string): autocannon.Request => ({
  method: 'POST',
  path: '/v1/pets',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  setupRequest: (request) => ({ ...request, body: createBody(Math.floor(Math.random() * 1e6)) })
})
const randomGet = (pets: number, key: string): autocannon.Request => ({
  ...get('/v1/pets/1', key),
  setupRequest: (request) => ({ ...request, path: `/v1/pets/${1 + Math.floor(Math.random() * pets)}` })
})

/**
 * The Lua side: shared definitions first. init() runs in wrk's thread once its address is
 * known (wrk.format names the host) and seeds the random numbers with the seed runWrk passes;
 * request() is called for every request. A fixed request is formatted once.
 */
const luaPrelude = (key: string) => `
local auth = { ["Authorization"] = ${luaString(`Bearer ${key}`)} }
local json = { ["Authorization"] = ${luaString(`Bearer ${key}`)}, ["Content-Type"] = "application/json" }
local function randomGet(pets) return wrk.format("GET", "/v1/pets/" .. math.random(1, pets), auth) end
local function create()
  local i = math.random(0, 999999)
  return wrk.format("POST", "/v1/pets", json, '{"name":"bench-' .. i .. '","categoryId":' .. (i % 50) .. ',"status":"available"}')
end
`
/** A count of pets as Lua reads it: a whole number of at least 1, checked here rather than inside wrk. */
const luaCount = (pets: number) => {
  if (!Number.isSafeInteger(pets) || pets < 1) throw new Error(`not a count of pets: ${pets}`)
  return String(pets)
}
const luaFixed = (path: string, key?: string) => `${key ? luaPrelude(key) : 'local auth = {}'}
local fixed
function init() fixed = wrk.format("GET", ${luaString(path)}, auth) end
function request() return fixed end
`
const luaRandomGet = (pets: number, key: string) => `${luaPrelude(key)}
function init(args) math.randomseed(tonumber(args[1])) end
function request() return randomGet(${luaCount(pets)}) end
`
const fixedGet = (name: string, path: (pets: number) => string, withKey = true): Scenario => ({
  name,
  build: (pets, key) => [get(path(pets), withKey ? key : undefined)],
  lua: (pets, key) => luaFixed(path(pets), withKey ? key : undefined)
})
const deepCursor = (pets: number) => `/v1/pets?limit=20&cursor=${encodeCursor(BigInt(Math.floor(pets * 0.9)))}`
const randomGetScenario: Scenario = { name: 'get by id', build: (pets, key) => [randomGet(pets, key)], lua: luaRandomGet }

export const SCENARIOS: Scenario[] = [
  fixedGet('list 20', () => '/v1/pets?limit=20'),
  fixedGet('list 20 status', () => '/v1/pets?limit=20&status=pending'),
  fixedGet('list deep cursor', deepCursor),
  randomGetScenario,
  revalidateList,
  revalidateGet,
  {
    name: 'create',
    build: (_pets, key) => [create(key)],
    lua: (_pets, key) => `${luaPrelude(key)}
function init(args) math.randomseed(tonumber(args[1])) end
function request() return create() end
`
  },
  fixedGet('401', () => '/v1/pets?limit=20', false),
  {
    // 70 % list, 20 % get, 10 % create, chosen per request.
    name: 'mix',
    build: (pets, key) => {
      const auth = { authorization: `Bearer ${key}` }
      return [{
        method: 'GET',
        path: '/v1/pets?limit=20',
        setupRequest: (request) => {
          const roll = Math.random()
          if (roll < 0.7) return { ...request, method: 'GET', path: '/v1/pets?limit=20', headers: auth, body: undefined }
          if (roll < 0.9) return { ...request, method: 'GET', path: `/v1/pets/${1 + Math.floor(Math.random() * pets)}`, headers: auth, body: undefined }
          return { ...request, method: 'POST', path: '/v1/pets', headers: { ...auth, 'content-type': 'application/json' }, body: createBody(Math.floor(Math.random() * 1e6)) }
        }
      }]
    },
    lua: (pets, key) => `${luaPrelude(key)}
local list
function init(args) math.randomseed(tonumber(args[1])); list = wrk.format("GET", "/v1/pets?limit=20", auth) end
function request()
  local roll = math.random()
  if roll < 0.7 then return list end
  if roll < 0.9 then return randomGet(${luaCount(pets)}) end
  return create()
end
`
  }
]

export const SCALE_SCENARIOS: Scenario[] = [
  fixedGet('list first page', () => '/v1/pets?limit=20'),
  fixedGet('list deep cursor', deepCursor),
  fixedGet('list rare status', () => '/v1/pets?limit=20&status=sold'),
  randomGetScenario
]

export type LoadGenerator = 'wrk' | 'autocannon'

/** BENCH_LOAD=wrk|autocannon chooses; by default wrk when it is installed, else autocannon. */
export function loadGenerator (): LoadGenerator {
  const chosen = process.env.BENCH_LOAD ?? (wrkVersion === undefined ? 'autocannon' : 'wrk')
  if (chosen !== 'wrk' && chosen !== 'autocannon') throw new Error(`BENCH_LOAD must be wrk or autocannon, not ${chosen}`)
  if (chosen === 'wrk' && wrkVersion === undefined) throw new Error('BENCH_LOAD=wrk, but wrk is not installed (Debian: apt-get install wrk)')
  return chosen
}

/** How the tables name the load generator. */
export function loadGeneratorName (): string {
  return loadGenerator() === 'wrk' ? `wrk ${wrkVersion} (1 thread)` : 'autocannon (in this process)'
}

/**
 * Every response's time, in milliseconds as autocannon measures it (process.hrtime, fractional).
 * autocannon's own percentiles come from a histogram whose unit is a whole millisecond, too
 * coarse here: most responses take a fraction of one, so its p50 reads 0 or 1 and a p99 ratio
 * could only be 1× or 2×. Kept in a growing Float64Array: a few hundred thousand numbers a run.
 */
export class Latencies {
  #values = new Float64Array(1 << 16)
  #count = 0

  add (ms: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2)
      grown.set(this.#values)
      this.#values = grown
    }
    this.#values[this.#count++] = ms
  }

  /** The nearest-rank percentile (p in 0..100); NaN when nothing was recorded. */
  percentiles (...ps: number[]): number[] {
    const sorted = this.#values.subarray(0, this.#count).sort()
    return ps.map((p) => this.#count === 0 ? Number.NaN : sorted[Math.max(0, Math.ceil(this.#count * p / 100) - 1)]!)
  }
}

/** The middle value (the lower of the two middle ones for an even count); NaN for none. */
export function median (xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN
}

/** Exactly `amount` requests of the scenario, over `connections` connections. */
export async function runRequests (url: string, requests: autocannon.Request[], options: { connections: number, amount: number }): Promise<void> {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    // A long timeout: under valgrind a request can wait seconds for the compiler.
    autocannon({ url, connections: options.connections, amount: options.amount, timeout: 120, requests }, (error, done) => error ? reject(error) : resolve(done))
  })
  if (result.errors + result.timeouts > 0) throw new Error(`${result.errors} errors and ${result.timeouts} timeouts in ${options.amount} requests`)
}

/** The scenario ready to run against the server at `url`: prepared there when it learns from the server, else itself. */
export async function readyScenario (scenario: Scenario, url: string, pets: number, key: string): Promise<Scenario> {
  return scenario.prepare ? await scenario.prepare(url, pets, key) : scenario
}

/** Runs the scenario, prepared first when it needs to be (callers that time the server prepare it before with readyScenario). */
export async function runLoad (url: string, unprepared: Scenario, options: { pets: number, key: string, connections: number, duration: number }): Promise<LoadResult> {
  const scenario = await readyScenario(unprepared, url, options.pets, options.key)
  if (loadGenerator() === 'wrk') return await runWrk(url, scenario.lua(options.pets, options.key), options)
  const latencies = new Latencies()
  let failed = 0
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({ url, connections: options.connections, duration: options.duration, requests: scenario.build(options.pets, options.key) }, (error, done) => error ? reject(error) : resolve(done))
    // Every response counts, whatever its status: the 401 scenario's responses are all 401s,
    // which autocannon leaves out of its own latency figures.
    run.on('response', (_client, status, _bytes, ms) => {
      latencies.add(ms)
      if (status >= 400) failed++
    })
  })
  const [p50, p99] = latencies.percentiles(50, 99)
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: p50!,
    p99: p99!,
    errorStatuses: failed,
    errors: result.errors + result.timeouts
  }
}

/**
 * CPU seconds of the load generator so far: this process, and the wrk processes it ran (the
 * kernel adds a child's time to its parent's once the child has exited and been reaped).
 */
export function loadGeneratorCpuSeconds (): number {
  const own = process.cpuUsage()
  // cutime is field 16 of /proc/PID/stat, cstime 17. Every child reaped counts, and during a
  // measurement only the load generator's wrk processes are.
  const fields = procStatFields('/proc/self/stat')
  const children = (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND
  return (own.user + own.system) / 1e6 + children
}
