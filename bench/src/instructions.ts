import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runRequests, type Scenario } from './load.ts'
import { serviceEnv } from './store.ts'
import { serviceScript, START_FLAGS, startServer } from './servers.ts'

/** Asked only when counting: a timed run has no use for valgrind. */
export function hasCallgrind (): boolean {
  return spawnSync('valgrind', ['--version']).status === 0
}

/**
 * The instructions one request costs the service, counted by valgrind's callgrind: every
 * instruction of every thread (the event loop, the thread pool, V8's compiler and collector),
 * the kernel's work excluded. Unlike requests a second, the count hardly moves with the
 * machine's speed, so a small change can show where a timed A/B cannot tell it from the
 * machine's drift. Work done on a clock (the key cache's check once a millisecond comes on
 * almost every request at valgrind's pace) raises the count alike for two sides run at once:
 * compare sides, not absolute counts.
 *
 * Start-up and warm-up are taken out by difference: the service is run twice, on fresh copies
 * of `storePath`, serving `requests` and then 3 × `requests`; the second costs 2 × `requests`
 * more. The runs go on at once, on any core; work done on a clock is counted per request as
 * slowly as the runs go, so nothing else should share the machine.
 */
export async function instructionsPerRequest (root: string, storePath: string, scenario: Scenario, pets: number, key: string, requests: number): Promise<Instructions> {
  const [fewer, more] = await Promise.all([requests, 3 * requests].map((amount) => countInstructions(root, storePath, scenario, pets, key, amount)))
  return { all: (more!.all - fewer!.all) / (2 * requests), eventLoop: (more!.eventLoop - fewer!.eventLoop) / (2 * requests) }
}

/**
 * Instructions of every thread, and of the event loop's thread alone. V8's concurrent marker and
 * sweeper run on threads of their own, and whether a major collection falls between the N-th
 * and the 3N-th request moves `all` by several per cent from one run to the next; the event
 * loop's count leaves the marker out, though not the collector's pauses, and moves less.
 */
export interface Instructions { all: number, eventLoop: number }

/**
 * The counts of one run from callgrind's files with --separate-threads=yes: one file a thread,
 * `callgrind.out.PID-NN`, thread 01 the main thread, each with its `summary:` line.
 */
export function countsOf (dir: string): Instructions {
  const counts = readdirSync(dir).filter((name) => /^callgrind\.out\.\d+-\d+$/.test(name)).map((name) => {
    const total = /^summary: (\d+)$/m.exec(readFileSync(join(dir, name), 'utf8'))?.[1]
    if (total === undefined) throw new Error(`callgrind wrote no instruction count in ${name}`)
    return { thread: Number(name.slice(name.lastIndexOf('-') + 1)), total: Number(total) }
  })
  const eventLoop = counts.find(({ thread }) => thread === 1)
  if (eventLoop === undefined) throw new Error(`callgrind wrote no count for the main thread in ${dir}`)
  return { all: counts.reduce((sum, { total }) => sum + total, 0), eventLoop: eventLoop.total }
}

/**
 * Under callgrind the service runs many times slower, and four of them share the cores with the
 * load generator: its event loop can be held up for seconds (a compile, a collection), and the
 * timers that run first when it resumes would close connections whose next request is already
 * waiting (the keep-alive timeout), or a new one whose first byte is (FIRST_BYTE_TIMEOUT_MS).
 * Both sides get the same long timeouts.
 */
const SLOW_CLIENT_TIMEOUTS = { FIRST_BYTE_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000', KEEP_ALIVE_TIMEOUT_MS: '60000' }

/** Instructions of a whole run of the service: start, `amount` requests of the scenario, stop. */
async function countInstructions (root: string, storePath: string, scenario: Scenario, pets: number, key: string, amount: number): Promise<Instructions> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-callgrind-'))
  try {
    const store = join(dir, 'petstore.db')
    copyFileSync(storePath, store)
    const valgrind = ['valgrind', '--quiet', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`]
    const server = await startServer('callgrind', serviceScript(root), { ...serviceEnv(`sqlite:${store}`), ...SLOW_CLIENT_TIMEOUTS }, '/readyz', START_FLAGS, valgrind)
    try {
      await runRequests(server.url, scenario.build(pets, key), { connections: 8, amount })
    } finally {
      await server.stop()
    }
    return countsOf(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
