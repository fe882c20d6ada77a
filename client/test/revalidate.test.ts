import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPetstoreClient, PetstoreError } from '../src/index.ts'
import { startServer, startStub } from './servers.ts'

test('a 304 to a read that named no ETag is PetstoreError unexpected_response, not retried', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, () => ({ status: 304, headers: { etag: '"not-asked-for"' } }))
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, cache: false })
  const error = await client.pets.get(1).then(() => assert.fail('a 304 with no body to use'), (failure: unknown) => failure)
  assert.ok(error instanceof PetstoreError, String(error))
  assert.deepEqual({ status: error.status, code: error.code, message: error.message }, { status: 304, code: 'unexpected_response', message: 'HTTP 304 Not Modified to a request that named no ETag' })
  assert.equal(stub.seen.length, 1)
})
