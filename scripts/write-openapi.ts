import { writeFileSync } from 'node:fs'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { documentText } from '../src/ops/openapi-generator.ts'
import { openStore } from '../src/store/index.ts'

/** Writes the OpenAPI document the routes describe to openapi.json, which the service serves (a test fails when they differ). */
const store = await openStore('sqlite::memory:')
const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, describeRoutes: true })
await app.ready()
writeFileSync(new URL('../openapi.json', import.meta.url), documentText(app))
await app.close()
