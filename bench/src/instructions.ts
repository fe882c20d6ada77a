import { execFile, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { instructionParts, type DumpParts } from './instruction-parts.ts'
import { median, readyScenario, runRequests, type Scenario } from './load.ts'
import type { ResponseHeaders } from './response-headers.ts'
import { serviceEnv } from './store.ts'
import { BASELINE_SCRIPT, SERVER_HOST, serviceScript, START_FLAGS, startServer, type BenchServer } from './servers.ts'

/** Asked only when counting: a timed run has no use for valgrind. */
export function hasCallgrind (): boolean {
  return spawnSync('valgrind', ['--version']).status === 0 && spawnSync('vgdb', ['--help']).status === 0
}

/**
 * How many requests warm the service up, uncounted, and how many windows of how many requests
 * are then counted; `parts`: also where the event loop's instructions went (instruction-parts.ts).
 */
export interface Counting { warmup: number, windows: number, perWindow: number, parts?: boolean }

/**
 * The instructions one request costs the service, counted by valgrind's callgrind: every
 * instruction of every thread (the event loop, the thread pool, V8's compiler and collector),
 * the kernel's work excluded. Unlike requests a second, the count hardly moves with the
 * machine's speed, so a small change can show where a timed A/B cannot tell it from the
 * machine's drift.
 *
 * Only a warm service is counted. It starts under valgrind with callgrind's instrumentation off
 * (several times faster) and serves `warmup` requests of the scenario: V8 is still compiling
 * the request path to optimized code thousands of requests after start, and counts taken
 * during that differ between two starts of the same code by more than the changes they judge.
 * Then instrumentation goes on, one window of requests is served uncounted, and `windows`
 * windows of `perWindow` requests are counted, the counters dumped after each; a side's figure
 * is its median window. A window that holds one of V8's major collections costs
 * far more than the others: whether one falls among a side's counted requests depends on where
 * its code happens to stand, not on what a request costs, and the median leaves that window
 * out. What a request allocates is still counted, in the scavenges of every window. Work done
 * on a clock meanwhile (timers, the log's flush) is counted too, alike on both sides of a
 * comparison, as they run at once.
 */
export async function instructionsPerRequest (root: string, storePath: string, scenario: Scenario, pets: number, key: string, counting: Counting): Promise<Instructions> {
  return await counted((dir, valgrind, flags) => {
    const store = join(dir, 'petstore.db')
    copyFileSync(storePath, store)
    return startServer('callgrind', serviceScript(root), { ...serviceEnv(`sqlite:${store}`), ...SLOW_CLIENT_TIMEOUTS }, '/readyz', [...START_FLAGS, ...flags], valgrind)
  }, scenario, pets, key, counting)
}

/**
 * The same count for the bare baseline (baseline.ts), serving `pets` pets from memory; with
 * `responseHeaders` (response-headers.ts), the baseline sending the service's headers.
 */
export async function baselineInstructionsPerRequest (scenario: Scenario, pets: number, key: string, counting: Counting, responseHeaders?: ResponseHeaders): Promise<Instructions> {
  const env = { BENCH_PETS: String(pets), ...(responseHeaders && { BENCH_RESPONSE_HEADERS: JSON.stringify(responseHeaders) }) }
  return await counted((_dir, valgrind, flags) => startServer('callgrind baseline', BASELINE_SCRIPT, env, '/v1/pets?limit=1', flags, valgrind), scenario, pets, key, counting)
}

/** Starts a server under `valgrind` with more Node `flags` (in a folder of its own, `dir`), then counts it as above. */
async function counted (start: (dir: string, valgrind: string[], flags: string[]) => Promise<BenchServer>, scenario: Scenario, pets: number, key: string, { warmup, windows, perWindow, parts }: Counting): Promise<Instructions> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-callgrind-'))
  let perfMap: string | undefined
  try {
    const valgrind = ['valgrind', '--quiet', '--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--vgdb-prefix=${join(dir, 'vgdb')}`, `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`]
    // Node writes where it put each compiled function to /tmp/perf-PID.map (its name is fixed).
    const server = await start(dir, valgrind, parts === true ? ['--perf-basic-prof'] : [])
    if (parts === true) perfMap = `/tmp/perf-${server.pid}.map`
    try {
      const requests = (await readyScenario(scenario, server.url, pets, key)).build(pets, key)
      await runRequests(server.url, requests, { connections: 8, amount: warmup })
      // The first window after instrumentation goes on costs more on both sides (V8 adapting to
      // a process now many times slower): served, then zeroed.
      await callgrind(dir, server.pid, 'instrumentation', 'on')
      await runRequests(server.url, requests, { connections: 8, amount: perWindow })
      await callgrind(dir, server.pid, 'zero')
      // Each dump zeroes the counters it writes.
      for (let window = 0; window < windows; window++) {
        await runRequests(server.url, requests, { connections: 8, amount: perWindow })
        await callgrind(dir, server.pid, 'dump')
      }
    } finally {
      await server.stop()
    }
    const dumps = Array.from({ length: windows }, (_, index) => countsOf(dir, index + 1))
    // The median is one of the counts (the lower middle one of an even number): its window's parts.
    const eventLoop = median(dumps.map(({ eventLoop }) => eventLoop))
    const perRequest = (counts: Map<string, number>) => new Map([...counts].map(([part, count]) => [part, count / perWindow]))
    const middle = perfMap === undefined ? undefined : instructionParts(join(dir, dumps.find((dump) => dump.eventLoop === eventLoop)!.eventLoopFile), perfMap)
    const partsOfMiddle = middle === undefined ? undefined : { own: perRequest(middle.own), clockDriven: perRequest(middle.clockDriven), literalsInRuntime: middle.literalsInRuntime / perWindow }
    return { all: median(dumps.map(({ all }) => all)) / perWindow, eventLoop: eventLoop / perWindow, parts: partsOfMiddle }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    if (perfMap !== undefined) rmSync(perfMap, { force: true })
  }
}

/**
 * A command to callgrind in a running service, through valgrind's vgdb. vgdb finds the service
 * by pipes named after the prefix, the PID, and the `USER` and `HOST` of the environment;
 * `startServer` gives the service its listen address as `HOST`, so vgdb gets the same.
 */
async function callgrind (dir: string, pid: number, ...command: string[]): Promise<void> {
  await promisify(execFile)('vgdb', [`--vgdb-prefix=${join(dir, 'vgdb')}`, `--pid=${pid}`, ...command], { timeout: 120_000, env: { ...process.env, HOST: SERVER_HOST } })
}

/** Instructions of every thread, and of the event loop's thread alone; where the event loop's went, when asked. */
export interface Instructions { all: number, eventLoop: number, parts?: DumpParts }

/**
 * The counts of one dump (`part`, from 1) from callgrind's files with --separate-threads=yes:
 * one file a thread, `callgrind.out.PID.PART-NN`, thread 01 the main thread, each with its
 * `summary:` line. The files callgrind writes as the service exits come after the last dump.
 */
export function countsOf (dir: string, part: number): Instructions & { eventLoopFile: string } {
  const pattern = new RegExp(`^callgrind\\.out\\.\\d+\\.${part}-\\d+$`)
  const counts = readdirSync(dir).filter((name) => pattern.test(name)).map((name) => {
    const total = /^summary: (\d+)$/m.exec(readFileSync(join(dir, name), 'utf8'))?.[1]
    if (total === undefined) throw new Error(`callgrind wrote no instruction count in ${name}`)
    return { name, thread: Number(name.slice(name.lastIndexOf('-') + 1)), total: Number(total) }
  })
  const eventLoop = counts.find(({ thread }) => thread === 1)
  if (eventLoop === undefined) throw new Error(`callgrind wrote no count for the main thread of dump ${part} in ${dir}`)
  return { all: counts.reduce((sum, { total }) => sum + total, 0), eventLoop: eventLoop.total, eventLoopFile: eventLoop.name }
}

/**
 * Under callgrind the service runs many times slower, and two of them share the cores with the
 * load generator: its event loop can be held up for seconds (a compile, a collection), and the
 * timers that run first when it resumes would close connections whose next request is already
 * waiting (the keep-alive timeout), or a new one whose first byte is (FIRST_BYTE_TIMEOUT_MS).
 * Both sides get the same long timeouts.
 */
const SLOW_CLIENT_TIMEOUTS = { FIRST_BYTE_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000', KEEP_ALIVE_TIMEOUT_MS: '60000' }
