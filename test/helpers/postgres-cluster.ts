import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

/*
 * PostgreSQL servers of a test's own, for what must not be done to the shared one: stopping it,
 * promoting a standby, turning it read-only. Each runs as the postgres user from a temporary
 * folder, on a free port bound to 127.0.0.1, and is stopped by its pid and removed when the
 * test ends. Needs root (to act as postgres) and PostgreSQL's binaries in POSTGRES_BIN.
 */

export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'
const READY_WITHIN_MS = 30_000

export interface PgNode {
  /** The port on 127.0.0.1. */
  port: number
  /** The data directory. */
  dir: string
  /** The postmaster's pid; stop() ends it. */
  readonly pid: number
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  url: string
  /** The server's own log so far, for a failure's message. */
  log(): string
  /** Fast shutdown (SIGINT: sessions ended, WAL sent to standbys first); waits for the exit. */
  stop(): Promise<void>
  /** Whether the postmaster is still running. */
  running(): boolean
}

/** Whether this process may start servers as the postgres user. */
export function canRunClusters (): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root, to run PostgreSQL as the postgres user'
  if (spawnSync(join(POSTGRES_BIN, 'postgres'), ['--version']).status !== 0) return `no PostgreSQL binaries in ${POSTGRES_BIN} (POSTGRES_BIN)`
  return undefined
}

function asPostgres (command: string, args: string[]): string[] {
  return ['--reuid=postgres', '--regid=postgres', '--init-groups', join(POSTGRES_BIN, command), ...args]
}

/** Runs a PostgreSQL tool as postgres to its end; throws with its output when it fails. */
function runAsPostgres (command: string, args: string[]): void {
  const result = spawnSync('setpriv', asPostgres(command, args), { encoding: 'utf8', timeout: 60_000 })
  if (result.status !== 0) throw new Error(`${command} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`)
}

async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** A folder owned by postgres, removed when the test ends (after the servers in it stopped). */
function clusterFolder (t: TestContext): string {
  const base = mkdtempSync(join(tmpdir(), 'petstore-pg-'))
  const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()
  chownSync(base, Number(ids), Number(gid))
  t.after(() => rmSync(base, { recursive: true, force: true }))
  return base
}

/** Starts the postmaster on dir and waits until it takes connections. */
async function startNode (t: TestContext, dir: string, socketDir: string, settings: Record<string, string>): Promise<PgNode> {
  const port = await freePort()
  const settingArgs = Object.entries({ listen_addresses: '127.0.0.1', ...settings }).flatMap(([name, value]) => ['-c', `${name}=${value}`])
  const child: ChildProcess = spawn('setpriv', asPostgres('postgres', ['-D', dir, '-p', String(port), '-k', socketDir, ...settingArgs]), { stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (chunk: Buffer) => { log = (log + chunk.toString()).slice(-8000) }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  const exited = once(child, 'exit')
  const node: PgNode = {
    port,
    dir,
    pid: child.pid!,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: () => log,
    running: () => child.exitCode === null && child.signalCode === null,
    async stop () {
      if (!node.running()) return
      process.kill(node.pid, 'SIGINT')
      const timer = setTimeout(() => { if (node.running()) process.kill(node.pid, 'SIGQUIT') }, 20_000)
      await exited
      clearTimeout(timer)
    }
  }
  t.after(() => node.stop())
  const deadline = Date.now() + READY_WITHIN_MS
  for (;;) {
    if (!node.running()) throw new Error(`PostgreSQL on port ${port} exited at start: ${log}`)
    const client = new pg.Client({ connectionString: node.url, connectionTimeoutMillis: 1000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.end()
      return node
    } catch {
      await client.end().catch(() => {})
      if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${port} took no connection within ${READY_WITHIN_MS} ms: ${log}`)
      await sleep(100)
    }
  }
}

/** A new primary: initdb (trust, which also lets standbys replicate from 127.0.0.1), then started. */
export async function startPrimary (t: TestContext, settings: Record<string, string> = {}): Promise<PgNode> {
  const base = clusterFolder(t)
  const dir = join(base, 'primary')
  runAsPostgres('initdb', ['-D', dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions'])
  return await startNode(t, dir, base, settings)
}

/**
 * A real streaming standby of primary: pg_basebackup -R (which writes standby.signal and
 * primary_conninfo), started on a port of its own. Read-only (hot standby) until promoted.
 */
export async function startStandby (t: TestContext, primary: PgNode, settings: Record<string, string> = {}): Promise<PgNode> {
  const base = clusterFolder(t)
  const dir = join(base, 'standby')
  runAsPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-R', '-X', 'stream', '-c', 'fast'])
  return await startNode(t, dir, base, settings)
}

/** A primary and one streaming standby of it. */
export async function startPrimaryAndStandby (t: TestContext, settings: Record<string, string> = {}): Promise<{ primary: PgNode, standby: PgNode }> {
  const primary = await startPrimary(t, settings)
  const standby = await startStandby(t, primary, settings)
  return { primary, standby }
}

/** One statement on a node, on a connection of its own. */
export async function queryNode<Row extends pg.QueryResultRow = Record<string, unknown>> (node: PgNode, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: node.url, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<Row>(text, values)).rows
  } finally {
    await client.end()
  }
}

/** Promotes a standby (pg_ctl promote) and waits until it takes writes. */
export async function promote (standby: PgNode): Promise<void> {
  runAsPostgres('pg_ctl', ['promote', '-D', standby.dir, '-w', '-t', '30'])
  const deadline = Date.now() + READY_WITHIN_MS
  while ((await queryNode<{ recovery: boolean }>(standby, 'SELECT pg_is_in_recovery() AS recovery'))[0]!.recovery) {
    if (Date.now() > deadline) throw new Error(`the standby on port ${standby.port} was not promoted within ${READY_WITHIN_MS} ms`)
    await sleep(100)
  }
}

/** Waits until the standby has replayed everything the primary has written so far. */
export async function caughtUp (primary: PgNode, standby: PgNode): Promise<void> {
  const [{ lsn }] = await queryNode<{ lsn: string }>(primary, 'SELECT pg_current_wal_lsn()::text AS lsn') as [{ lsn: string }]
  const deadline = Date.now() + READY_WITHIN_MS
  while (!(await queryNode<{ done: boolean }>(standby, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]))[0]!.done) {
    if (Date.now() > deadline) throw new Error(`the standby on port ${standby.port} did not replay up to ${lsn} within ${READY_WITHIN_MS} ms`)
    await sleep(50)
  }
}
