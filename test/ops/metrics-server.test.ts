import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { assertError, fetchedReply } from '../helpers/errors.ts'
import { logLines, startServer, tempDir } from '../helpers/processes.ts'

test('the server process serves /metrics on METRICS_PORT only: the API port replies 404 to it, and the address is logged', async (t) => {
  const dir = tempDir(t)
  const server = await startServer(t, { DATABASE_URL: `sqlite:${join(dir, 'pets.db')}` })
  assert.notEqual(new URL(server.metricsUrl).port, new URL(server.url).port)
  assert.equal(new URL(server.metricsUrl).hostname, '127.0.0.1', 'METRICS_HOST defaults to loopback')

  const scraped = await fetch(`${server.metricsUrl}/metrics`)
  assert.equal(scraped.status, 200)
  assert.match(String(scraped.headers.get('content-type')), /^text\/plain; version=0\.0\.4/)
  assert.match(await scraped.text(), /^petstore_ready 1$/m)

  assertError(await fetchedReply(await fetch(`${server.url}/metrics`)), 404, 'not_found', 'No route for GET /metrics.')
  assert.equal(logLines(server).filter((line) => String(line.msg).startsWith('metrics listening at ')).length, 1)
})
