import autocannon from 'autocannon'
import { encodeCursor } from '../../src/int64.ts'

export interface Scenario { name: string, build(pets: number, key: string): autocannon.Request[] }
/** Throughput, and the latency percentiles of every answer in milliseconds (fractional). */
export interface LoadResult { rps: number, p50: number, p99: number, non2xx: number, errors: number }

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

export const SCENARIOS: Scenario[] = [
  { name: 'list 20', build: (_pets, key) => [get('/v1/pets?limit=20', key)] },
  { name: 'list 20 status', build: (_pets, key) => [get('/v1/pets?limit=20&status=pending', key)] },
  { name: 'list deep cursor', build: (pets, key) => [get(`/v1/pets?limit=20&cursor=${encodeCursor(BigInt(Math.floor(pets * 0.9)))}`, key)] },
  { name: 'get by id', build: (pets, key) => [randomGet(pets, key)] },
  { name: 'create', build: (_pets, key) => [create(key)] },
  { name: '401', build: () => [get('/v1/pets?limit=20')] },
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
    }
  }
]

export const SCALE_SCENARIOS: Scenario[] = [
  { name: 'list first page', build: (_pets, key) => [get('/v1/pets?limit=20', key)] },
  { name: 'list deep cursor', build: (pets, key) => [get(`/v1/pets?limit=20&cursor=${encodeCursor(BigInt(Math.floor(pets * 0.9)))}`, key)] },
  { name: 'list rare status', build: (_pets, key) => [get('/v1/pets?limit=20&status=sold', key)] },
  { name: 'get by id', build: (pets, key) => [randomGet(pets, key)] }
]

/**
 * Every answer's time, in milliseconds as autocannon measures it (process.hrtime, fractional).
 * autocannon's own percentiles come from a histogram whose unit is a whole millisecond, too
 * coarse here: most answers take a fraction of one, so its p50 reads 0 or 1 and a p99 ratio
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

export async function runLoad (url: string, requests: autocannon.Request[], options: { connections: number, duration: number }): Promise<LoadResult> {
  const latencies = new Latencies()
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({ url, connections: options.connections, duration: options.duration, requests }, (error, done) => error ? reject(error) : resolve(done))
    // Every answer counts, whatever its status: the 401 scenario's answers are all 401s,
    // which autocannon leaves out of its own latency figures.
    run.on('response', (_client, _status, _bytes, ms) => { latencies.add(ms) })
  })
  const [p50, p99] = latencies.percentiles(50, 99)
  return {
    rps: result.requests.average,
    p50: p50!,
    p99: p99!,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}
