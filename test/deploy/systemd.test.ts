import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { loadConfig } from '../../src/config.ts'

/**
 * The units of deploy/systemd/: systemd-analyze verify finds nothing to say about any of them,
 * and petstore.service runs package.json's start command with node itself, which drains on the
 * SIGTERM that KillMode=mixed sends it alone, within TimeoutStopSec.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const UNITS = join(ROOT, 'deploy/systemd')
const INSTALL = '/opt/petstore'
const SYSTEM_UNITS = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((folder) => existsSync(join(folder, 'sysinit.target')))

/** Why systemd-analyze cannot run here, or undefined: under CI a failure, else a loud skip. */
function noSystemdAnalyze (t: TestContext): boolean {
  const missing = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status !== 0
    ? 'systemd-analyze is missing: install it with apt-get install -y systemd'
    : SYSTEM_UNITS === undefined ? 'no /usr/lib/systemd/system/sysinit.target to verify the units against' : undefined
  if (missing === undefined) return false
  if (process.env.CI === 'true') assert.fail(missing)
  process.stderr.write(`\n*** SKIPPED systemd-analyze verify: ${missing} ***\n\n`)
  t.skip(missing)
  return true
}

/** The unit files (service, timer, socket) of deploy/systemd/, and each one's drop-ins. */
function unitFiles (): { units: string[], dropIns: string[] } {
  const names = readdirSync(UNITS)
  const units = names.filter((name) => /\.(service|timer|socket)$/.test(name)).sort()
  const dropIns = names.filter((name) => name.endsWith('.d') && statSync(join(UNITS, name)).isDirectory())
    .flatMap((folder) => readdirSync(join(UNITS, folder)).filter((name) => name.endsWith('.conf')).map((name) => join(folder, name)))
  return { units, dropIns }
}

/**
 * A root folder holding the system's own units, ours in its /etc/systemd/system, and an empty
 * executable at each absolute path our units run: verify --root checks that each ExecStart
 * names an executable inside the root, so everything else it checks is checked as installed.
 */
function verifyRoot (t: TestContext, edit: (text: string) => string = (text) => text): { root: string, units: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'petstore-systemd-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  cpSync(SYSTEM_UNITS!, join(root, 'usr/lib/systemd/system'), { recursive: true })
  const { units, dropIns } = unitFiles()
  for (const file of [...units, ...dropIns]) {
    const text = edit(readFileSync(join(UNITS, file), 'utf8'))
    const target = join(root, 'etc/systemd/system', file)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, text)
    for (const [, program] of text.matchAll(/^Exec\w+=[-@:+!]*(\/\S+)/gm)) {
      mkdirSync(join(root, dirname(program!)), { recursive: true })
      writeFileSync(join(root, program!), '')
      chmodSync(join(root, program!), 0o755)
    }
  }
  return { root, units }
}

function verify (root: string, units: string[]): { status: number | null, output: string } {
  const result = spawnSync('systemd-analyze', ['verify', `--root=${root}`, ...units], { encoding: 'utf8' })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

/** The [Service] settings of a unit: each key's values in order (Environment= may repeat). */
function serviceSettings (text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  const section = /^\[Service\]$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? ''
  for (const line of section.split('\n')) {
    const match = /^(\w+)=(.*)$/.exec(line)
    if (match) settings.set(match[1]!, [...settings.get(match[1]!) ?? [], match[2]!])
  }
  return settings
}

const petstoreUnit = () => serviceSettings(readFileSync(join(UNITS, 'petstore.service'), 'utf8'))

function environmentOf (settings: Map<string, string[]>): Record<string, string> {
  return Object.fromEntries((settings.get('Environment') ?? []).map((assignment) => {
    const at = assignment.indexOf('=')
    return [assignment.slice(0, at), assignment.slice(at + 1)]
  }))
}

test('systemd-analyze verify finds nothing to say about any unit in deploy/systemd/, with its drop-ins', (t) => {
  if (noSystemdAnalyze(t)) return
  const { root, units } = verifyRoot(t)
  assert.ok(units.includes('petstore.service'), `units found: ${units.join(', ')}`)
  assert.deepEqual(verify(root, units), { status: 0, output: '' })
})

test('systemd-analyze verify, as this test runs it, reports a misspelt setting and a program that is not there', (t) => {
  if (noSystemdAnalyze(t)) return
  const misspelt = verifyRoot(t, (text) => text.replace(/^KillMode=/m, 'KilMode='))
  assert.match(verify(misspelt.root, ['petstore.service']).output, /Unknown key 'KilMode' in section \[Service\]/)
  const missing = verifyRoot(t)
  rmSync(join(missing.root, INSTALL, 'node_modules/node/bin/node'))
  const result = verify(missing.root, ['petstore.service'])
  assert.equal(result.status, 1)
  assert.match(result.output, /Command \/opt\/petstore\/node_modules\/node\/bin\/node is not executable/)
})

test('petstore.service runs package.json\'s start command with node itself, hardened, SQLite in its state directory, and stops it by the drain', () => {
  const unit = petstoreUnit()
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const start = /^(.*?) exec node (.*)$/.exec(scripts.start)
  assert.ok(start, scripts.start)
  const startEnvironment = Object.fromEntries(start[1]!.split(' ').map((assignment) => assignment.split('=') as [string, string]))
  assert.deepEqual(unit.get('ExecStart'), [`${INSTALL}/node_modules/node/bin/node ${start[2]}`], 'the start script\'s node flags, and node itself receives the signal')
  assert.deepEqual(unit.get('WorkingDirectory'), [INSTALL])
  assert.deepEqual(environmentOf(unit), {
    NODE_ENV: 'production',
    MALLOC_ARENA_MAX: startEnvironment.MALLOC_ARENA_MAX,
    NODE_COMPILE_CACHE: '/var/cache/petstore/node-compile',
    DATABASE_URL: 'sqlite:/var/lib/petstore/petstore.db'
  })
  const one = (key: string) => unit.get(key)?.join(' ')
  assert.deepEqual(
    ['StateDirectory', 'CacheDirectory', 'EnvironmentFile', 'User', 'NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'PrivateTmp', 'CapabilityBoundingSet', 'UMask', 'Restart'].map((key) => [key, one(key)]),
    [['StateDirectory', 'petstore'], ['CacheDirectory', 'petstore'], ['EnvironmentFile', '-/etc/petstore/petstore.env'], ['User', 'petstore'], ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'], ['ProtectHome', 'yes'], ['PrivateTmp', 'yes'], ['CapabilityBoundingSet', ''], ['UMask', '0077'], ['Restart', 'on-failure']])

  // SIGTERM to node alone, and more time than the service gives itself to drain and close.
  assert.deepEqual([one('KillMode'), one('KillSignal')], ['mixed', 'SIGTERM'])
  const stopS = Number(/^(\d+)s$/.exec(one('TimeoutStopSec') ?? '')?.[1])
  const shutdownTimeoutMs = loadConfig({}).SHUTDOWN_TIMEOUT_MS
  assert.ok(stopS * 1000 > shutdownTimeoutMs, `TimeoutStopSec ${one('TimeoutStopSec')} must exceed SHUTDOWN_TIMEOUT_MS ${shutdownTimeoutMs}`)
})

test('the PostgreSQL drop-in takes DATABASE_URL from a credential instead of the environment', () => {
  const dropIn = serviceSettings(readFileSync(join(UNITS, 'petstore.service.d/postgres.conf'), 'utf8'))
  assert.deepEqual(Object.fromEntries(dropIn), {
    UnsetEnvironment: ['DATABASE_URL'],
    LoadCredential: ['database-url:/etc/petstore/database-url'],
    Environment: ['DATABASE_URL_FILE=%d/database-url']
  })
})

test('petstore.service\'s command, run as systemd would with this repository as the install, serves, writes the first key into the state directory and exits 0 on the SIGTERM to node alone', { timeout: 120_000 }, async (t) => {
  const unit = petstoreUnit()
  const folder = mkdtempSync(join(tmpdir(), 'petstore-unit-'))
  t.after(() => rmSync(folder, { recursive: true, force: true }))
  // The unit's paths, moved: the install is this repository, the state and cache folders temporary.
  const place = (text: string) => text.replaceAll(INSTALL, ROOT.replace(/\/$/, '')).replaceAll('/var/lib/petstore', join(folder, 'state')).replaceAll('/var/cache/petstore', join(folder, 'cache'))
  mkdirSync(join(folder, 'state'), { mode: 0o700 })
  mkdirSync(join(folder, 'cache'))
  const [program, ...args] = place(unit.get('ExecStart')![0]!).split(' ')
  const environment = Object.fromEntries(Object.entries(environmentOf(unit)).map(([name, value]) => [name, place(value)]))
  const child = spawn(program!, args, {
    cwd: place(unit.get('WorkingDirectory')![0]!),
    env: { ...environment, PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', SHUTDOWN_DRAIN_MS: '200', MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let log = ''
  child.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const exited = new Promise<{ code: number | null, signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let port: number | undefined
  for (let tries = 0; tries < 600 && port === undefined; tries++) {
    port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1]) || undefined
    if (port === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.ok(port, `did not listen:\n${log}`)
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
  assert.equal(ready.status, 200)
  const keyFile = join(folder, 'state/first-api-key')
  assert.match(readFileSync(keyFile, 'utf8').trim(), /^psk_[A-Za-z0-9_-]{43}$/)
  assert.equal(statSync(keyFile).mode & 0o777, 0o600)

  const signalled = performance.now()
  child.kill(unit.get('KillSignal')![0] as NodeJS.Signals)
  assert.deepEqual(await exited, { code: 0, signal: null }, log)
  const stopS = Number(/^(\d+)s$/.exec(unit.get('TimeoutStopSec')![0]!)?.[1])
  assert.ok(performance.now() - signalled < stopS * 1000, 'it exits before systemd would kill it')
  assert.match(log, /"msg":"draining/)
  assert.ok(existsSync(join(folder, 'cache/node-compile')), 'NODE_COMPILE_CACHE is written in the cache directory')
})
