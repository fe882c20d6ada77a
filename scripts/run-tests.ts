import { spawn } from 'node:child_process'
import { globSync } from 'node:fs'
import { probePostgres, probeRedis } from './service-probes.ts'

/**
 * The test command: the whole suite on SQLite, then the API suite (test/api) once more on
 * PostgreSQL with the PostgreSQL-only tests (test/postgres). Each API test is written once and
 * runs once per store. Tests that need Redis (test/redis) run in the first pass.
 *
 * A service that cannot be reached is never skipped silently: outside CI its tests are left
 * out under a banner saying so and why; under CI (CI=true) that is a failure.
 */

interface RunResult { code: number, tests: number, pass: number, fail: number, skipped: number }

const CI = process.env.CI === 'true'
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function runSuite (label: string, files: string[], env: Record<string, string>): Promise<RunResult> {
  process.stdout.write(`\n=== ${label}: ${files.length} files ===\n`)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=240000', ...files], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let tail = ''
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk)
      tail = (tail + chunk.toString()).slice(-4000)
    })
    child.on('close', (code) => {
      const count = (name: string) => Number(new RegExp(`ℹ ${name} (\\d+)`).exec(tail)?.[1] ?? 0)
      resolve({ code: code ?? 1, tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skipped') })
    })
  })
}

function banner (lines: string[]): void {
  const width = Math.max(...lines.map((line) => line.length)) + 4
  const rule = '!'.repeat(width)
  process.stdout.write(`\n${rule}\n${lines.map((line) => `! ${line.padEnd(width - 4)} !`).join('\n')}\n${rule}\n`)
}

/** Undefined to run the tests; else the reason they do not run (printed loudly). */
async function unreachable (service: string, url: string, files: string[], reason: string | undefined): Promise<string | undefined> {
  if (reason === undefined) return undefined
  const redacted = url.replace(/(\/\/[^:@/]*):[^@/]*@/, '$1:***@')
  banner([
    `${service.toUpperCase()} TESTS ${CI ? 'FAILED' : 'SKIPPED'}: ${service} at ${redacted} is unreachable`,
    `reason: ${reason}`,
    `not run: ${files.length} test files in ${[...new Set(files.map((file) => file.split('/').slice(0, -1).join('/')))].join(', ')}`,
    CI ? 'CI=true: a missing service is a failure, never a skip.' : 'Start it (or set the URL) and run npm test again; under CI this fails.'
  ])
  return reason
}

// test/ mirrors src/ by folder; these four folders are suites named by what they need instead.
const SUITES = ['api', 'postgres', 'redis', 'failover']
const once = [
  ...globSync('test/**/*.test.ts').filter((file) => !SUITES.includes(file.split('/')[1]!)),
  ...globSync('client/test/*.test.ts')
].sort()
const perStore = globSync('test/api/*.test.ts').sort()
const postgresOnly = globSync('test/postgres/*.test.ts').sort()
const redisOnly = globSync('test/redis/*.test.ts').sort()
// A pg_auto_failover formation of their own (PostgreSQL 15 binaries, not the shared server).
const failover = globSync('test/failover/*.test.ts').sort()

const [postgresDown, redisDown] = await Promise.all([probePostgres(TEST_DATABASE_URL), probeRedis(TEST_REDIS_URL)])
const missing: string[] = []
if (await unreachable('Redis', TEST_REDIS_URL, redisOnly, redisDown)) missing.push('Redis')

const results: Array<[string, RunResult]> = []
const first = [...once, ...perStore, ...(redisDown ? [] : redisOnly)]
results.push(['sqlite', await runSuite('SQLite: whole suite', first, { TEST_STORE: 'sqlite' })])

let postgresTests = 0
if (await unreachable('PostgreSQL', TEST_DATABASE_URL, [...perStore, ...postgresOnly], postgresDown)) {
  missing.push('PostgreSQL')
} else {
  const run = await runSuite('PostgreSQL: API suite and PostgreSQL tests', [...perStore, ...postgresOnly], { TEST_STORE: 'postgres', TEST_DATABASE_URL })
  results.push(['postgres', run])
  postgresTests = run.tests
}

// Each test makes its own formation and kills its processes: the pass needs no service, and a
// missing pg_autoctl fails it under CI (the tests say so), like haproxy for the stack test.
results.push(['failover', await runSuite('Failover: pg_auto_failover formation under load', failover, {})])

process.stdout.write('\n=== summary ===\n')
for (const [label, r] of results) {
  process.stdout.write(`${label.padEnd(10)} tests ${r.tests}  pass ${r.pass}  fail ${r.fail}  skipped ${r.skipped}  exit ${r.code}\n`)
}
process.stdout.write(`PostgreSQL tests executed: ${postgresTests}\n`)
if (missing.length > 0) process.stdout.write(`NOT RUN (unreachable): ${missing.join(', ')}${CI ? ' — failing, CI=true' : ''}\n`)
const ranNothingOnPostgres = !postgresDown && postgresTests === 0
if (ranNothingOnPostgres) process.stdout.write('the PostgreSQL pass executed no test\n')
process.exitCode = results.some(([, r]) => r.code !== 0) || ranNothingOnPostgres || (CI && missing.length > 0) ? 1 : 0
