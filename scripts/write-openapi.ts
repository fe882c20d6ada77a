import { writeFileSync } from 'node:fs'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openStore } from '../src/store/index.ts'

/** Writes the served OpenAPI document to openapi.json (a test fails when they differ). */
const store = await openStore('sqlite::memory:')
const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), store })
const res = await app.inject({ url: '/v1/openapi.json' })
// Integers beyond 2^53 (the int64 bounds) keep their exact text.
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON
type Reviver = (this: unknown, key: string, value: unknown) => unknown
const exact = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && context?.source ? rawJson(context.source) : value
writeFileSync(new URL('../openapi.json', import.meta.url), JSON.stringify(JSON.parse(res.body, exact as Reviver), null, 2) + '\n')
await app.close()
