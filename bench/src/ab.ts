import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadGeneratorName, median, runLoad, SCENARIOS, type LoadResult } from './load.ts'
import { hasCallgrind, instructionsPerRequest, type Counting } from './instructions.ts'
import { prepareStore, serviceEnv, type Prepared } from './store.ts'
import { pinSelfToCore1, REPO_ROOT, rssMb, serviceScript, START_FLAGS, startServer, type BenchServer } from './servers.ts'

/**
 * npm run bench:ab -- REF [--pairs 6] [--duration 5] [--pets 10000] [--connections 32] [SCENARIO …]
 *
 * Judges a change: the service at REF (any commit, checked out in a temporary worktree) is A,
 * the working tree is B. Both serve copies of one SQLite store (made by the working tree's
 * migrations) at the same time, with the settings of `npm run bench`, and are measured in
 * alternating pairs (A then B, then B then A, …). Each scenario prints the median of the pair
 * ratios B/A and every pair: on a shared machine whose speed drifts from minute to minute by
 * more than the change being judged, runs made one after the other cannot tell the change
 * from the drift; pairs can.
 *
 * --together: each pair loads A and B at the same time instead of one after the other. Both
 * servers share core 0, so the scheduler gives each half of it and a drift of the machine's
 * speed hits both alike; B/A is then the ratio of what a request costs each. Wants wrk (two wrk
 * processes on core 1); autocannon would drive both from this one process.
 *
 * --fresh: both servers are started afresh (on fresh copies of the store) for every pair. A
 * Node process's speed differs from one start to the next by several per cent (where the
 * heap, hash seeds and compiled code fall), so a run that starts each side once measures one
 * draw of each; fresh starts let the median see several.
 *
 * --instructions [--warmup 60000] [--requests 20000] [--windows 5]: counts instead of timing.
 * Each side serves the scenario under valgrind's callgrind, warmed up first, and the table gives
 * the instructions a request costs in its median window, of every thread and of the event
 * loop's alone (instructions.ts); an A/A run says how much that moves. It leaves out the
 * kernel's part (socket writes, syncs), which a timed run includes.
 */
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pairs: { type: 'string', default: '6' },
    duration: { type: 'string', default: '5' },
    pets: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '32' },
    instructions: { type: 'boolean', default: false },
    together: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '60000' },
    requests: { type: 'string', default: '20000' },
    windows: { type: 'string', default: '5' }
  }
})
const [ref, ...names] = positionals
if (!ref) throw new Error('usage: npm run bench:ab -- REF [--pairs N] [--duration S] [--pets N] [--together] [--fresh] [--instructions [--warmup N] [--requests N] [--windows N]] [SCENARIO …]')
if (flags.instructions && !hasCallgrind()) {
  process.stderr.write('bench:ab --instructions needs valgrind (Debian: apt-get install valgrind)\n')
  process.exit(2)
}
const [requests, windows] = [Number(flags.requests), Number(flags.windows)]
if (flags.instructions && !(Number.isInteger(windows) && windows >= 1 && requests >= windows)) {
  process.stderr.write('bench:ab: --windows must be a whole number from 1 to --requests\n')
  process.exit(2)
}
const counting: Counting = { warmup: Number(flags.warmup), windows, perWindow: Math.round(requests / windows) }
if (spawnSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: REPO_ROOT }).status !== 0) {
  process.stderr.write(`bench:ab: ${ref} is not a commit of this repository\n`)
  process.exit(2)
}
const scenarios = names.length === 0 ? SCENARIOS : names.map((name) => SCENARIOS.find((s) => s.name === name) ?? unknownScenario(name))
const pairs = Number(flags.pairs)
const pets = Number(flags.pets)
const load = { connections: Number(flags.connections), duration: Number(flags.duration) }
const pinned = pinSelfToCore1()

function unknownScenario (name: string): never {
  throw new Error(`no scenario "${name}"; there are: ${SCENARIOS.map((s) => s.name).join(', ')}`)
}

const dir = mkdtempSync(join(tmpdir(), 'petstore-ab-'))
const worktree = join(dir, 'a')
const servers: BenchServer[] = []
let prepared: Prepared | undefined
try {
  execFileSync('git', ['worktree', 'add', '--quiet', '--detach', worktree, ref], { cwd: REPO_ROOT, stdio: 'inherit' })
  // The dependencies of the working tree: a change of dependencies is not what this compares.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(worktree, 'node_modules'))

  // Always SQLite: each side gets a copy of the same seeded file.
  prepared = await prepareStore(pets)
  const key = prepared.key
  const storePath = prepared.databaseUrl.slice('sqlite:'.length)
  if (flags.instructions) await countBoth(worktree, storePath, key)
  else await timeBoth(worktree, storePath, key)
} finally {
  for (const server of servers) await server.stop()
  await prepared?.cleanup()
  // spawnSync: when the worktree was never made, there is nothing to remove and no error to add.
  spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: REPO_ROOT, stdio: 'ignore' })
  rmSync(dir, { recursive: true, force: true })
}

async function countBoth (worktree: string, storePath: string, key: string) {
  console.log(`A = ${ref}, B = the working tree; ${pets} pets; instructions a request under callgrind, the median of ${counting.windows} windows of ${counting.perWindow} requests after ${counting.warmup} uncounted`)
  console.log('| scenario | A instructions | B instructions | B/A | A event loop | B event loop | B/A event loop |')
  console.log('|---|--:|--:|--:|--:|--:|--:|')
  for (const scenario of scenarios) {
    const [a, b] = await Promise.all([worktree, REPO_ROOT].map((root) => instructionsPerRequest(root, storePath, scenario, pets, key, counting)))
    console.log(`| ${scenario.name} | ${a!.all.toFixed(0)} | ${b!.all.toFixed(0)} | ${(b!.all / a!.all).toFixed(3)} | ${a!.eventLoop.toFixed(0)} | ${b!.eventLoop.toFixed(0)} | ${(b!.eventLoop / a!.eventLoop).toFixed(3)} |`)
  }
}

async function timeBoth (worktree: string, storePath: string, key: string) {
  let starts = 0
  const start = async () => {
    for (const server of servers.splice(0)) await server.stop()
    starts++
    for (const [name, root] of [['A', worktree], ['B', REPO_ROOT]] as const) {
      const path = join(dir, `${name}-${starts}.db`)
      copyFileSync(storePath, path)
      servers.push(await startServer(name, serviceScript(root), serviceEnv(`sqlite:${path}`), '/readyz', START_FLAGS))
    }
    for (const server of servers) await runLoad(server.url, SCENARIOS[0]!, { pets, key, ...load, duration: 2 })
  }
  await start()

  console.log(`A = ${ref}, B = the working tree; ${pets} pets, ${load.connections} connections, ${pairs} pairs of ${load.duration} s${flags.together ? ', A and B loaded at once' : ''}${flags.fresh ? ', servers started afresh for each pair' : ''}; load: ${loadGeneratorName()} on core 1: ${pinned ? 'pinned' : 'not pinned'}`)
  console.log('| scenario | B/A, median of pairs | pairs | A req/s | B req/s | A p99 ms | B p99 ms | A RSS MB | B RSS MB |')
  console.log('|---|--:|---|--:|--:|--:|--:|--:|--:|')
  for (const scenario of scenarios) {
    const samples: Array<[LoadResult, LoadResult]> = []
    for (let i = 0; i < pairs; i++) {
      if (flags.fresh && (i > 0 || scenario !== scenarios[0])) await start()
      if (flags.together) {
        samples.push(await Promise.all(servers.map((server) => runLoad(server.url, scenario, { pets, key, ...load }))) as [LoadResult, LoadResult])
        continue
      }
      const [first, second] = i % 2 === 0 ? servers : [...servers].reverse()
      const one = await runLoad(first!.url, scenario, { pets, key, ...load })
      const other = await runLoad(second!.url, scenario, { pets, key, ...load })
      samples.push(i % 2 === 0 ? [one, other] : [other, one])
    }
    const ratios = samples.map(([a, b]) => b.rps / a.rps)
    const of = (side: 0 | 1, read: (r: LoadResult) => number) => median(samples.map((pair) => read(pair[side])))
    console.log(`| ${scenario.name} | ${median(ratios).toFixed(3)} | ${ratios.map((r) => r.toFixed(2)).join(' ')} | ${of(0, (r) => r.rps).toFixed(0)} | ${of(1, (r) => r.rps).toFixed(0)} | ${of(0, (r) => r.p99).toFixed(2)} | ${of(1, (r) => r.p99).toFixed(2)} | ${rssMb(servers[0]!.pid).toFixed(0)} | ${rssMb(servers[1]!.pid).toFixed(0)} |`)
  }
}
