import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from './helpers.ts'

test('/readyz answers ready; with ?verbose it lists each dependency, without REDIS_URL the store only', async (t) => {
  const { app } = await buildTestApp(t)
  const ready = (url: string) => app.inject({ url }).then((res) => ({ status: res.statusCode, body: JSON.parse(res.body) as unknown }))
  assert.deepEqual(await ready('/readyz'), { status: 200, body: { status: 'ready' } })
  assert.deepEqual(await ready('/readyz?verbose'), { status: 200, body: { status: 'ready', checks: { store: 'up' } } })
})
