import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createResponseValidator } from './openapi-validator.ts'
import { withFaults, type Faults } from './faults.ts'
import { dropSchema, randomSchemaName, schemaUrl } from './pg-schema.ts'
import { buildApp, type AppDeps } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import { generateApiKey } from '../../src/auth/api-key.ts'
import { openStore } from '../../src/store/index.ts'
import type { Dialect, KeyAudit, Store } from '../../src/store/types.ts'

/** Which store the API suite runs on this time: scripts/run-tests.ts runs it once per store. */
export const STORE_KIND = (process.env.TEST_STORE ?? 'sqlite') as Dialect

export interface TestStore { url: string, store: Store, cleanup(): Promise<void> }

/**
 * A fresh, migrated, empty store of the kind under test, removed after the test. On
 * PostgreSQL: a schema with a random name in TEST_DATABASE_URL, dropped by cleanup.
 */
export async function createTestStore (): Promise<TestStore> {
  if (STORE_KIND === 'postgres') {
    const schema = randomSchemaName()
    const url = schemaUrl(schema)
    const store = await openStore(url)
    await store.migrate()
    return { url, store, cleanup: async () => { await store.close(); await dropSchema(schema) } }
  }
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'))
  const url = `sqlite:${join(dir, 'petstore.db')}`
  const store = await openStore(url)
  await store.migrate()
  return { url, store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
}

/**
 * The settings of a test app. Load shedding is off (MAX_EVENT_LOOP_DELAY_MS=0): on a busy
 * machine a test would otherwise get a 503 that says nothing of what it tests. A test about
 * shedding passes its own MAX_EVENT_LOOP_DELAY_MS.
 */
export function testConfig (overrides: Record<string, string> = {}): Config {
  return loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', ...overrides })
}

/** The actor and host the tests' own key changes are recorded with in the key trail. */
export const TEST_AUDIT: KeyAudit = { actor: 'test', host: 'test-host' }

export async function issueKey (store: Store, name = 'test'): Promise<{ key: string, id: number }> {
  const generated = generateApiKey()
  const record = await store.createApiKey({ name, hash: generated.hash, prefix: generated.prefix }, TEST_AUDIT)
  return { key: generated.key, id: record.id }
}

/** The committed contract; a test keeps it equal to the served one. */
export const openapiDocument = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'))
export const validateResponse = createResponseValidator(openapiDocument)

/** app.inject, plus the check that the response is one the OpenAPI document allows. */
export async function injectChecked (app: FastifyInstance, options: InjectOptions): Promise<LightMyRequestResponse> {
  const res = await app.inject(options)
  const errors = validateResponse({
    method: options.method ?? 'GET',
    url: String(options.url),
    status: res.statusCode,
    contentType: res.headers['content-type'] as string | undefined,
    body: res.body
  })
  assert.deepEqual(errors, [], `response does not match openapi.json: ${res.body}`)
  return res
}

export interface TestApp {
  app: FastifyInstance
  /** Every API test goes through this: it validates each response against openapi.json. */
  inject(options: InjectOptions): Promise<LightMyRequestResponse>
  store: Store
  url: string
  key: string
  keyId: number
  auth: { authorization: string }
}

export type TestAppOptions = Pick<AppDeps, 'now' | 'logStream' | 'redis' | 'describeRoutes'> & {
  env?: Record<string, string>
  /** Failures and delays injected around every store call the app makes. */
  faults?: Faults
}

/** An app on a fresh store with one key, closed when the test ends. */
export async function buildTestApp (t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  const { url, store, cleanup } = await createTestStore()
  const { key, id } = await issueKey(store)
  const { env, faults, ...deps } = options
  const app = await buildApp({ config: testConfig(env), store: faults ? withFaults(store, faults) : store, ...deps })
  t.after(async () => { await app.close(); await cleanup() })
  return { app, inject: (o) => injectChecked(app, o), store, url, key, keyId: id, auth: { authorization: `Bearer ${key}` } }
}

export const json = { 'content-type': 'application/json' }
