import assert from 'node:assert/strict'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { freePort } from '../helpers/haproxy.ts'

/**
 * A pg_auto_failover formation of its own on loopback, as docs/operations/high-availability.md
 * ("Set it up") sets one up with Debian's packages: a monitor and two PostgreSQL 15 nodes, the
 * standby synchronous (`synchronous_standby_names = 'ANY 1 (…)'`), each run by `pg_autoctl` in
 * the foreground as the user postgres (pg_autoctl refuses root), on free ports, in a temporary
 * folder owned by postgres. Nothing here touches another PostgreSQL on the machine, and every
 * process it starts is stopped by its PID.
 */

export const PG_BIN = '/usr/lib/postgresql/15/bin'
const PG_CTL = `${PG_BIN}/pg_ctl`
const EXTENSION = '/usr/share/postgresql/15/extension/pgautofailover.control'

/**
 * The monitor's settings that bound how long a lost primary goes unnoticed and how long the
 * promotion then takes (ALTER SYSTEM on the monitor, then a reload). Defaults in brackets.
 * - health_check_period (5000 ms): the monitor connects to each node this often;
 * - health_check_timeout (5000 ms): a connection attempt that takes longer fails;
 * - health_check_max_retries (2) and health_check_retry_delay (2000 ms): failed attempts
 *   are tried again this many times, this far apart, before the check counts as failed;
 * - node_considered_unhealthy_timeout (20000 ms): a node whose check failed is unhealthy once
 *   its own pg_autoctl has not reported for this long either;
 * - primary_demote_timeout (30000 ms): after that, the monitor waits this long for the lost
 *   primary to demote itself before the standby is allowed to take writes.
 * With the values below the standby took writes 8 to 10 s after the primary's machine went.
 */
export const MONITOR_SETTINGS = {
  'pgautofailover.health_check_period': 1000,
  'pgautofailover.health_check_timeout': 1000,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.health_check_retry_delay': 500,
  'pgautofailover.node_considered_unhealthy_timeout': 3000,
  'pgautofailover.primary_demote_timeout': 5000
} as const

/**
 * The nodes' pg_autoctl setting (`pg_autoctl config set`): a primary that can reach neither the
 * monitor nor a standby for this many seconds (20 by default) demotes itself. It must stay
 * below primary_demote_timeout, so that a primary cut off by the network has stopped taking
 * writes before its standby starts to.
 */
export const NODE_SETTINGS = { 'timeout.network_partition_timeout': 3 } as const

const UP_TIMEOUT_MS = 120_000
const SETTLE_TIMEOUT_MS = 60_000
const COMMAND_TIMEOUT_MS = 90_000

export interface FormationNode {
  name: string
  port: number
  pgdata: string
  /** This node's PostgreSQL alone, database `postgres`, as user postgres. */
  url: string
}

export interface NodeState { name: string, port: number, reported: string, assigned: string, health: number }

export interface Formation {
  nodes: [FormationNode, FormationNode]
  /** `pg_autoctl show uri --formation default` with the user: postgres://postgres@h1:p1,h2:p2/postgres?target_session_attrs=read-write… */
  uri: string
  /** What `pg_autoctl show uri --formation default` printed, unedited (it names no user). */
  shownUri: string
  monitorUrl: string
  /** The monitor's view of the nodes. */
  state(): Promise<NodeState[]>
  /** The node the monitor has as primary (reported and assigned). */
  primary(): Promise<FormationNode>
  /** Resolves once one node is primary and the other a synchronous secondary, both healthy. */
  waitSettled(timeoutMs?: number): Promise<{ primary: FormationNode, secondary: FormationNode }>
  /** `pg_autoctl perform switchover`, then settled again: the secondary is the primary. */
  switchover(): Promise<{ from: FormationNode, to: FormationNode, ms: number }>
  /**
   * As when the primary's machine goes: SIGKILL to its pg_autoctl, its postmaster (from
   * postmaster.pid) and every process under either. Resolves once they are all gone.
   */
  killPrimary(): Promise<{ node: FormationNode, killedAt: number }>
  /** Resolves once `node` takes a write (a temporary table) and the monitor has it as (wait_)primary. */
  waitWritable(node: FormationNode, timeoutMs?: number): Promise<void>
  /** Starts a stopped node's pg_autoctl again; resolves once it is the synchronous secondary. */
  restartNode(node: FormationNode): Promise<{ ms: number }>
  /** Recent lines of pg_autoctl's output, for failure messages. */
  logTail(): string
  /** Stops every process it started, by PID, and removes its folders. */
  destroy(): Promise<void>
}

/** Why a formation cannot be made here, or undefined. */
export function pgAutoctlMissing (): string | undefined {
  const install = 'install them with apt-get install -y pg-auto-failover-cli postgresql-15-auto-failover'
  try {
    execFileSync('pg_autoctl', ['--version'], { stdio: 'ignore', timeout: 10_000 })
  } catch {
    return `pg_autoctl is missing: ${install}`
  }
  if (!existsSync(PG_CTL)) return `${PG_CTL} is missing: apt-get install -y postgresql-15`
  if (!existsSync(EXTENSION)) return `the pgautofailover extension is missing: ${install}`
  return undefined
}

/** PIDs of every live process under `pid` (not `pid` itself), from /proc. */
function descendants (pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8') } catch { continue }
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (state === 'Z') continue
    const list = children.get(Number(ppid)) ?? []
    list.push(Number(entry))
    children.set(Number(ppid), list)
  }
  const found: number[] = []
  const walk = (parent: number) => { for (const child of children.get(parent) ?? []) { found.push(child); walk(child) } }
  walk(pid)
  return found
}

function alive (pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

function postmasterPid (pgdata: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0])
    return pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function kill (pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try { process.kill(pid, signal) } catch { /* already gone */ }
  }
}

async function waitGone (pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (pids.some(alive)) {
    if (Date.now() > deadline) return false
    await sleep(50)
  }
  return true
}

function postgresIds (): { uid: number, gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'))
  assert.ok(line, 'no user postgres (the postgresql-15 package makes it)')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

export async function createFormation (): Promise<Formation> {
  const asRoot = process.getuid?.() === 0
  const base = mkdtempSync(join(tmpdir(), 'petstore-formation-'))
  const dirs = { config: join(base, 'config'), data: join(base, 'data'), run: join(base, 'run') }
  for (const dir of Object.values(dirs)) mkdirSync(dir)
  if (asRoot) {
    const { uid, gid } = postgresIds()
    for (const dir of [base, ...Object.values(dirs)]) chownSync(dir, uid, gid)
  }
  const env = {
    PATH: `${PG_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: base,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_RUNTIME_DIR: dirs.run,
    LANG: 'C.UTF-8'
  }
  // setpriv execs pg_autoctl in place: the PID held is pg_autoctl's own.
  const command = (args: string[]): [string, string[]] => asRoot
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', 'pg_autoctl', ...args]]
    : ['pg_autoctl', args]

  const lines: string[] = []
  const remember = (label: string) => (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => `${label}: ${line}`))
    if (lines.length > 300) lines.splice(0, lines.length - 300)
  }
  const logTail = () => lines.slice(-80).join('\n')

  const services = new Map<string, ChildProcess>()
  const pgdatas = new Set<string>()
  // Should the test process end without destroy(), nothing it started outlives it.
  const killAll = () => {
    const pids = [...services.values()].flatMap((child) => child.pid && child.exitCode === null && child.signalCode === null ? [child.pid, ...descendants(child.pid)] : [])
    for (const pgdata of pgdatas) {
      const postmaster = postmasterPid(pgdata)
      if (postmaster && alive(postmaster)) pids.push(postmaster, ...descendants(postmaster))
    }
    kill(pids, 'SIGKILL')
    return pids
  }
  process.once('exit', killAll)

  const run = (label: string, args: string[]) => {
    const [file, argv] = command(args)
    const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout!.on('data', remember(label))
    child.stderr!.on('data', remember(label))
    services.set(label, child)
    return child
  }
  const once = (args: string[]) => new Promise<string>((resolve, reject) => {
    const [file, argv] = command(args)
    const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk })
    child.stderr.on('data', (chunk: Buffer) => { out += chunk })
    child.once('error', reject)
    child.once('close', (code, signal) => code === 0 ? resolve(out) : reject(new Error(`pg_autoctl ${args.join(' ')} ended with ${code ?? signal}:\n${out}`)))
  })

  const monitorPort = await freePort()
  const monitorPgdata = join(base, 'monitor')
  pgdatas.add(monitorPgdata)
  const monitorUrl = `postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover`
  let monitor: pg.Client | undefined
  const ports = [await freePort(), await freePort()]
  const nodes = ports.map((port, i): FormationNode => ({
    name: `node${i + 1}`,
    port,
    pgdata: join(base, `node${i + 1}`),
    url: `postgres://postgres@127.0.0.1:${port}/postgres`
  })) as [FormationNode, FormationNode]

  const destroy = async () => {
    process.off('exit', killAll)
    await monitor?.end().catch(() => {})
    monitor = undefined
    // pg_autoctl stops its PostgreSQL on SIGINT (a fast shutdown); what is left after 15 s is killed.
    const tops = [...services.values()].flatMap((child) => child.pid && child.exitCode === null && child.signalCode === null ? [child.pid] : [])
    kill(tops, 'SIGINT')
    if (!await waitGone(tops, 15_000)) kill(tops, 'SIGKILL')
    await waitGone(killAll(), 10_000)
    rmSync(base, { recursive: true, force: true })
  }

  const stopped = new Set<string>()
  const withDeadline = async <T>(what: string, timeoutMs: number, step: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + timeoutMs
    let last: unknown
    for (;;) {
      try {
        const value = await step()
        if (value !== undefined) return value
      } catch (error) { last = error }
      for (const [label, child] of services) {
        if (child.exitCode !== null && !stopped.has(label)) assert.fail(`${label}'s pg_autoctl exited (${child.exitCode}) while waiting for ${what}:\n${logTail()}`)
      }
      if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}\n${JSON.stringify(await stateOrNothing())}\n${logTail()}`)
      await sleep(200)
    }
  }

  const connectMonitor = async () => {
    if (monitor) return monitor
    const client = new pg.Client({ connectionString: monitorUrl, connectionTimeoutMillis: 5000 })
    client.on('error', () => {})
    await client.connect()
    monitor = client
    return client
  }
  const state = async (): Promise<NodeState[]> => {
    const client = await connectMonitor()
    try {
      const { rows } = await client.query<{ nodename: string, nodeport: number, current_group_state: string, assigned_group_state: string, health: number }>(
        "SELECT nodename, nodeport, current_group_state, assigned_group_state, health FROM pgautofailover.current_state('default') ORDER BY nodename")
      return rows.map((row) => ({ name: row.nodename, port: row.nodeport, reported: row.current_group_state, assigned: row.assigned_group_state, health: row.health }))
    } catch (error) {
      await client.end().catch(() => {})
      monitor = undefined
      throw error
    }
  }
  const stateOrNothing = () => state().catch(() => [])
  const nodeNamed = (name: string) => nodes.find((node) => node.name === name)!

  const query = async (url: string, text: string): Promise<pg.QueryResult> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, query_timeout: 5000 })
    client.on('error', () => {})
    try {
      await client.connect()
      return await client.query(text)
    } finally {
      await client.end().catch(() => {})
    }
  }

  const waitSettled = (timeoutMs = SETTLE_TIMEOUT_MS) => withDeadline('a primary and a synchronous secondary', timeoutMs, async () => {
    const states = await state()
    const primary = states.find((node) => node.reported === 'primary' && node.assigned === 'primary' && node.health === 1)
    const secondary = states.find((node) => node.reported === 'secondary' && node.assigned === 'secondary' && node.health === 1)
    if (!primary || !secondary || states.length !== 2) return undefined
    const { rows } = await query(nodeNamed(primary.name).url, 'SHOW synchronous_standby_names')
    if (!/^ANY 1 \(/.test(String(rows[0]?.synchronous_standby_names))) return undefined
    return { primary: nodeNamed(primary.name), secondary: nodeNamed(secondary.name) }
  })

  // pg_autoctl starts PostgreSQL with its own listen_addresses, '*' unless told otherwise, and
  // `create` takes no option for it: create, set it to loopback, then run.
  // Every setting is written before the node's service runs: a running service rewrites its
  // configuration file on reload, and a `config set` that reads it meanwhile finds it half written.
  const createAndRun = async (label: string, pgdata: string, createArgs: string[], settings: Record<string, string | number> = {}) => {
    await once(createArgs)
    for (const [name, value] of Object.entries({ 'postgresql.listen_addresses': '127.0.0.1', ...settings })) {
      await once(['config', 'set', '--pgdata', pgdata, name, String(value)])
    }
    run(label, ['run', '--pgdata', pgdata])
  }

  const startNode = (node: FormationNode, args: string[]) => {
    stopped.delete(node.name)
    pgdatas.add(node.pgdata)
    run(node.name, args)
  }

  try {
    await createAndRun('monitor', monitorPgdata, ['create', 'monitor', '--pgdata', monitorPgdata, '--pgport', String(monitorPort), '--pgctl', PG_CTL,
      '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl'])
    const client = await withDeadline('the monitor', UP_TIMEOUT_MS, async () => {
      const client = await connectMonitor()
      await client.query("SELECT 1 FROM pg_extension WHERE extname = 'pgautofailover'").then(({ rowCount }) => assert.equal(rowCount, 1))
      return client
    })
    for (const [name, value] of Object.entries(MONITOR_SETTINGS)) await client.query(`ALTER SYSTEM SET ${name} = ${value}`)
    await client.query('SELECT pg_reload_conf()')
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=prefer`
    const createNode = async (node: FormationNode) => {
      stopped.delete(node.name)
      pgdatas.add(node.pgdata)
      await createAndRun(node.name, node.pgdata, ['create', 'postgres', '--pgdata', node.pgdata, '--pgport', String(node.port), '--pgctl', PG_CTL,
        '--hostname', '127.0.0.1', '--name', node.name, '--auth', 'trust', '--no-ssl', '--monitor', monitorUri], NODE_SETTINGS)
    }
    // The first node becomes the primary (alone: "single"), the second its standby.
    await createNode(nodes[0])
    await withDeadline('the first node as primary', UP_TIMEOUT_MS, async () =>
      (await state()).find((node) => node.name === 'node1' && node.reported === 'single' && node.assigned === 'single'))
    await createNode(nodes[1])
    const settled = await waitSettled(UP_TIMEOUT_MS)
    assert.equal(settled.primary.name, 'node1')
  } catch (error) {
    const tail = logTail()
    await destroy()
    throw new Error(`the formation did not come up: ${(error as Error).message}\n${tail}`)
  }

  const shown = (await once(['show', 'uri', '--pgdata', monitorPgdata, '--formation', 'default'])).trim()
  assert.match(shown, /^postgres:\/\/[^@/]+,[^@/]+\/postgres\?target_session_attrs=read-write/, shown)
  const uri = shown.replace('postgres://', 'postgres://postgres@')

  const primary = async () => {
    const found = (await state()).find((node) => node.reported === 'primary' && node.assigned === 'primary')
    assert.ok(found, 'no node is primary')
    return nodeNamed(found.name)
  }

  return {
    nodes,
    uri,
    shownUri: shown,
    monitorUrl,
    state,
    primary,
    waitSettled,
    logTail,
    destroy,
    async switchover () {
      const { primary: from } = await waitSettled()
      const started = performance.now()
      await once(['perform', 'switchover', '--pgdata', monitorPgdata, '--formation', 'default', '--wait', '60'])
      const { primary: to } = await waitSettled()
      assert.notEqual(to.name, from.name, 'the switchover left the primary where it was')
      return { from, to, ms: performance.now() - started }
    },
    async killPrimary () {
      const { primary: node } = await waitSettled()
      const child = services.get(node.name)!
      const postmaster = postmasterPid(node.pgdata)
      assert.ok(child.pid && postmaster && alive(postmaster), `${node.name} runs no PostgreSQL`)
      const pids = [child.pid, ...descendants(child.pid), postmaster, ...descendants(postmaster)]
      stopped.add(node.name)
      kill(pids, 'SIGKILL')
      const killedAt = performance.now()
      assert.ok(await waitGone(pids, 10_000), `processes of ${node.name} outlived SIGKILL`)
      return { node, killedAt }
    },
    waitWritable: (node, timeoutMs = SETTLE_TIMEOUT_MS) => withDeadline(`${node.name} taking writes`, timeoutMs, async () => {
      const mine = (await state()).find((each) => each.name === node.name)
      if (!mine || !['wait_primary', 'primary'].includes(mine.reported)) return undefined
      await query(node.url, 'CREATE TEMPORARY TABLE failover_probe (x int); INSERT INTO failover_probe VALUES (1)')
      return true
    }).then(() => {}),
    async restartNode (node) {
      const started = performance.now()
      startNode(node, ['run', '--pgdata', node.pgdata])
      const { secondary } = await waitSettled(UP_TIMEOUT_MS)
      assert.equal(secondary.name, node.name)
      return { ms: performance.now() - started }
    }
  }
}
