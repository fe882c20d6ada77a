import { writeFileSync } from 'node:fs'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openStore } from '../src/store/index.ts'

/** Writes the served OpenAPI document to openapi.json (a test fails when they differ). */
const store = await openStore('sqlite::memory:')
const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), store })
const res = await app.inject({ url: '/v1/openapi.json' })
writeFileSync(new URL('../openapi.json', import.meta.url), JSON.stringify(JSON.parse(res.body), null, 2) + '\n')
await app.close()
