import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { generateApiKey } from '../src/auth/api-key.ts'
import { openStore } from '../src/store/index.ts'
import type { Store } from '../src/store/types.ts'
import { crashRounds } from '../test/helpers/crash-rounds.ts'
import { fuzz, FUZZ_ENV } from '../test/helpers/fuzz-requests.ts'
import { TEST_AUDIT as FAULTS_AUDIT } from '../test/helpers/app.ts'
import { emptyTally, type FaultTally } from '../test/helpers/load.ts'
import { dropSchema, randomSchemaName, schemaUrl, TEST_DATABASE_URL } from '../test/helpers/pg-schema.ts'
import { shutdownRounds } from '../test/helpers/shutdown-rounds.ts'
import { probePostgres } from './service-probes.ts'

/**
 * The long forms of the fault tests (npm run test:faults), on each store: crash rounds (SIGKILL
 * under a write load, restart, check), graceful-shutdown rounds (SIGTERM under load) and
 * fuzzing. Prints one table; exits 1 when anything was lost, got 5xx or broke a rule.
 */

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 10)
const FUZZ_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 30_000)
const CI = process.env.CI === 'true'

interface TestStore { url: string, cleanup(): Promise<void> }

async function freshStore (kind: 'sqlite' | 'postgres'): Promise<TestStore> {
  if (kind === 'postgres') {
    const schema = randomSchemaName()
    return { url: schemaUrl(schema), cleanup: () => dropSchema(schema) }
  }
  const dir = mkdtempSync(join(tmpdir(), 'petstore-faults-'))
  return { url: `sqlite:${join(dir, 'petstore.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
}

async function withStore<T> (kind: 'sqlite' | 'postgres', work: (url: string, store: Store, key: string) => Promise<T>): Promise<T> {
  const target = await freshStore(kind)
  const store = await openStore(target.url)
  try {
    await store.migrate()
    const generated = generateApiKey()
    await store.createApiKey({ name: 'faults', hash: generated.hash, prefix: generated.prefix }, FAULTS_AUDIT)
    return await work(target.url, store, generated.key)
  } finally {
    await store.close()
    await target.cleanup()
  }
}

async function fuzzTally (store: Store, key: string): Promise<FaultTally> {
  // The app closes the store when it closes; withStore's second close is a no-op.
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', ...FUZZ_ENV }), store })
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const revoked = generateApiKey()
    const record = await store.createApiKey({ name: 'revoked', hash: revoked.hash, prefix: revoked.prefix }, FAULTS_AUDIT)
    await store.revokeApiKey(record.id, FAULTS_AUDIT)
    const port = (app.server.address() as { port: number }).port
    const result = await fuzz({ port, key, revokedKey: revoked.key, store }, { requests: FUZZ_REQUESTS })
    return { ...emptyTally(), runs: 1, requests: result.requests, acknowledged: result.created, serverErrors: result.serverErrors }
  } catch (error) {
    return { ...emptyTally(), runs: 1, violations: [(error as Error).message.split('\n').slice(0, 3).join(' ')] }
  } finally {
    await app.close()
  }
}

const progress = (line: string) => process.stdout.write(`  ${line}\n`)
const rows: Array<[string, string, FaultTally]> = []
const kinds: Array<'sqlite' | 'postgres'> = ['sqlite']
const postgresDown = await probePostgres(TEST_DATABASE_URL)
if (postgresDown === undefined) kinds.push('postgres')
else process.stdout.write(`\n!!! PostgreSQL at ${TEST_DATABASE_URL} is unreachable (${postgresDown}): its rounds are ${CI ? 'a FAILURE under CI' : 'SKIPPED'} !!!\n`)

for (const kind of kinds) {
  process.stdout.write(`\n=== ${kind} ===\n`)
  rows.push([kind, 'crash (SIGKILL)', await withStore(kind, (url, _store, key) => crashRounds({ storeUrl: url, key, rounds: ROUNDS, progress }))])
  rows.push([kind, 'shutdown (SIGTERM)', await withStore(kind, (url, _store, key) => shutdownRounds({ storeUrl: url, key, rounds: ROUNDS, progress }))])
  rows.push([kind, 'fuzz', await withStore(kind, (_url, store, key) => fuzzTally(store, key))])
}

const header = ['store', 'test', 'runs', 'requests', 'acknowledged', 'lost', '5xx', 'violations']
const table = [header, ...rows.map(([kind, name, t]) => [kind, name, t.runs, t.requests, t.acknowledged, t.lost, t.serverErrors, t.violations.length].map(String))]
const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
const line = (row: string[]) => '| ' + row.map((cell, i) => i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join(' | ') + ' |'
const rule = '|' + widths.map((width, i) => i < 2 ? '-'.repeat(width + 2) : '-'.repeat(width + 1) + ':').join('|') + '|'
process.stdout.write('\n' + [line(table[0]!), rule, ...table.slice(1).map(line)].join('\n') + '\n')
for (const [kind, name, t] of rows) for (const violation of t.violations.slice(0, 10)) process.stdout.write(`${kind} ${name}: ${violation}\n`)
const failed = rows.some(([, , t]) => t.lost > 0 || t.serverErrors > 0 || t.violations.length > 0) || (CI && postgresDown !== undefined)
process.exitCode = failed ? 1 : 0
