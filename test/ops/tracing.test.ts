import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { probePostgres } from '../../scripts/service-probes.ts'
import { tracingWanted } from '../../src/server.ts'
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { freshSchema, TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { logLines, runToExit, startServer, tempDir, type ServerProcess } from '../helpers/processes.ts'

const { version: PACKAGE_VERSION } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const MODULE_LOADS = `--import=${new URL('../helpers/module-loads.ts', import.meta.url).pathname}`
const SERVER_KIND = 2
const WAIT_MS = 15_000

/** The server of one test with a fresh store, its first key, and what it loaded. */
async function startWithKey (t: TestContext, env: Record<string, string>) {
  // A file of the test's own: on PostgreSQL the default would be ./data in the repository.
  const keyFile = join(tempDir(t), 'first-api-key')
  const server = await startServer(t, { NODE_OPTIONS: MODULE_LOADS, FIRST_KEY_FILE: keyFile, METRICS_PORT: '0', ...env })
  // Written before the server listens.
  const key = readFileSync(keyFile, 'utf8').trim()
  const loaded = () => server.stderr().split('\n').filter((line) => line.startsWith('loaded '))
  return { server, authorization: `Bearer ${key}`, loaded }
}

function tracingEnv (endpoint: string, protocol = 'http/json'): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '20' }
}

/** A caller's W3C trace context: a fresh trace id and the caller's own span id. */
function callerContext () {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

async function waitFor<T> (what: string, get: () => T | undefined): Promise<T> {
  const until = Date.now() + WAIT_MS
  for (;;) {
    const value = get()
    if (value !== undefined) return value
    if (Date.now() > until) assert.fail(`no ${what} within ${WAIT_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Whether `span` is `ancestor` or below it, by the parents within its trace. */
function descendsFrom (span: ReceivedSpan, ancestor: ReceivedSpan, spans: ReceivedSpan[]): boolean {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]))
  for (let at: ReceivedSpan | undefined = span; at !== undefined; at = byId.get(at.parentSpanId)) {
    if (at.parentSpanId === ancestor.spanId) return true
  }
  return false
}

/** The log line of the request whose response carried this X-Request-Id. */
async function requestLogLine (server: ServerProcess, requestId: string | null) {
  return waitFor('request log line', () => logLines(server).find((line) => line.msg === 'request' && line.reqId === requestId))
}

/**
 * Creates a pet untraced, then reads it with a caller's traceparent, and checks the trace the
 * server sent: the request span under the caller's, named by the route template, with a store
 * span beneath it; and the request's log line carrying the same trace.
 */
async function checkTracedRead (t: TestContext, databaseUrl: string, dbSystem: string) {
  const receiver = await startOtlpReceiver(t)
  const { server, authorization, loaded } = await startWithKey(t, { DATABASE_URL: databaseUrl, ...tracingEnv(receiver.url) })
  assert.ok(loaded().length > 0, 'the OpenTelemetry SDK is loaded when tracing is on')
  const created = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":7}' })
  assert.equal(created.status, 201)
  const { id } = await created.json() as { id: number }

  const caller = callerContext()
  const read = await fetch(`${server.url}/v1/pets/${id}?trace=me`, { headers: { authorization, traceparent: caller.traceparent } })
  assert.equal(read.status, 200)
  const inTrace = () => receiver.spans().filter((span) => span.traceId === caller.traceId)
  const serverSpan = await waitFor('server span', () => inTrace().find((span) => span.kind === SERVER_KIND))
  const storeSpan = await waitFor('getPet store span', () => inTrace().find((span) => span.name === 'store.getPet'))

  assert.deepEqual({ ...serverSpan, attributes: { ...serverSpan.attributes, 'fastify.root': undefined } }, {
    traceId: caller.traceId,
    spanId: serverSpan.spanId,
    parentSpanId: caller.spanId,
    name: 'GET /v1/pets/:petId',
    kind: SERVER_KIND,
    attributes: {
      'fastify.root': undefined,
      'http.request.method': 'GET',
      'http.route': '/v1/pets/:petId',
      'url.path': `/v1/pets/${id}`,
      'http.response.status_code': 200
    },
    status: serverSpan.status,
    scope: '@fastify/otel',
    resource: serverSpan.resource
  })
  assert.equal(serverSpan.status.code ?? 0, 0, 'a 200 is not an error')
  assert.equal(serverSpan.resource['service.name'], 'petstore')
  assert.equal(serverSpan.resource['service.version'], PACKAGE_VERSION, 'the release that sent the span')
  assert.deepEqual(storeSpan.attributes, { 'db.system.name': dbSystem, 'petstore.store.operation': 'getPet' })
  assert.ok(descendsFrom(storeSpan, serverSpan, receiver.spans()), 'the store span is below the request span')
  // The route's handler is named by its operation, as docs/operations/observe.md says.
  const handlerSpan = await waitFor('handler span', () => inTrace().find((span) => span.name === 'handler - getPet'))
  assert.equal(handlerSpan.parentSpanId, serverSpan.spanId, JSON.stringify(inTrace().map((span) => span.name)))

  const line = await requestLogLine(server, read.headers.get('x-request-id'))
  assert.equal(line.trace_id, caller.traceId)
  assert.equal(line.span_id, serverSpan.spanId)
  return { receiver, serverSpan, storeSpan, inTrace }
}

test('tracing is on when an OTLP endpoint is set and OTEL_SDK_DISABLED is not true', () => {
  const cases: Array<[Record<string, string>, boolean]> = [
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_SERVICE_NAME: 'petstore', OTEL_TRACES_SAMPLER: 'always_on' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: ' TRUE ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true]
  ]
  assert.deepEqual(cases.map(([env]) => tracingWanted(env)), cases.map(([, on]) => on))
})

test('SQLite: the caller\'s trace continues in a span named by the route template, with a store span beneath, and the log line names it', async (t) => {
  const { inTrace, serverSpan } = await checkTracedRead(t, `sqlite:${join(tempDir(t), 'petstore.db')}`, 'sqlite')
  // The bearer check (an onRequest hook) asks whether keys changed: a child of the request span itself.
  const keyVersion = inTrace().find((span) => span.name === 'store.keyVersion')
  assert.equal(keyVersion?.parentSpanId, serverSpan.spanId, JSON.stringify(inTrace().map((span) => span.name)))
  assert.deepEqual(inTrace().filter((span) => span.name.startsWith('pg')), [])
})

test('PostgreSQL: the same trace, and the driver\'s query spans below the store span', async (t) => {
  const down = await probePostgres(TEST_DATABASE_URL)
  if (down !== undefined) {
    const message = `PostgreSQL at ${TEST_DATABASE_URL} is unreachable (${down})`
    if (process.env.CI === 'true') assert.fail(message)
    process.stderr.write(`\n*** SKIPPED a PostgreSQL tracing test: ${message} ***\n\n`)
    t.skip(message)
    return
  }
  const { receiver, storeSpan, inTrace } = await checkTracedRead(t, freshSchema(t).url, 'postgresql')
  const query = await waitFor('pg query span', () => inTrace().find((span) => span.name.startsWith('pg.query') && span.parentSpanId === storeSpan.spanId))
  assert.equal(query.attributes['db.system.name'], 'postgresql')
  assert.equal(typeof query.attributes['db.query.text'], 'string')
  assert.ok(descendsFrom(query, storeSpan, receiver.spans()))
})

test('with the default protocol the spans go to /v1/traces as OTLP protobuf', async (t) => {
  const receiver = await startOtlpReceiver(t)
  const env = tracingEnv(receiver.url)
  delete env.OTEL_EXPORTER_OTLP_PROTOCOL
  const { server, authorization } = await startWithKey(t, { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, ...env })
  const caller = callerContext()
  assert.equal((await fetch(`${server.url}/v1/pets`, { headers: { authorization, traceparent: caller.traceparent } })).status, 200)
  // Protobuf carries ids as raw bytes and names as UTF-8.
  const post = await waitFor('protobuf post', () => receiver.posts().find((p) => p.body.includes(Buffer.from(caller.traceId, 'hex'))))
  assert.equal(post.path, '/v1/traces')
  assert.equal(post.contentType, 'application/x-protobuf')
  assert.ok(post.body.includes(Buffer.from('GET /v1/pets')))
})

test('without OTEL_* the server loads no OpenTelemetry module and its log lines carry no trace', async (t) => {
  const { server, authorization, loaded } = await startWithKey(t, { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` })
  const read = await fetch(`${server.url}/v1/pets`, { headers: { authorization, traceparent: callerContext().traceparent } })
  assert.equal(read.status, 200)
  const line = await requestLogLine(server, read.headers.get('x-request-id'))
  assert.deepEqual(Object.keys(line), ['level', 'time', 'pid', 'hostname', 'reqId', 'method', 'route', 'path', 'status', 'durationMs', 'keyId', 'msg'])
  assert.deepEqual(loaded(), [])
  assert.equal(read.headers.get('traceparent'), null)
})

test('OTEL_SERVICE_NAME names the service, OTEL_RESOURCE_ATTRIBUTES may set its version, and with OTEL_PROPAGATORS=b3 a B3 caller\'s trace continues', async (t) => {
  const receiver = await startOtlpReceiver(t)
  const env = { ...tracingEnv(receiver.url), OTEL_SERVICE_NAME: 'petstore-eu', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,service.version=2.0.0-rc.1', OTEL_PROPAGATORS: 'b3' }
  const { server, authorization } = await startWithKey(t, { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, ...env })
  const caller = callerContext()
  const read = await fetch(`${server.url}/v1/pets`, { headers: { authorization, b3: `${caller.traceId}-${caller.spanId}-1` } })
  assert.equal(read.status, 200)
  const span = await waitFor('server span', () => receiver.spans().find((s) => s.traceId === caller.traceId && s.kind === SERVER_KIND))
  assert.deepEqual({ name: span.name, parentSpanId: span.parentSpanId }, { name: 'GET /v1/pets', parentSpanId: caller.spanId })
  assert.equal(span.resource['service.name'], 'petstore-eu')
  assert.equal(span.resource['deployment.environment.name'], 'test')
  assert.equal(span.resource['service.version'], '2.0.0-rc.1')
})

test('with OTEL_TRACES_EXPORTER=none nothing is recorded: the log line carries no trace', async (t) => {
  const receiver = await startOtlpReceiver(t)
  const { server, authorization } = await startWithKey(t, { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, ...tracingEnv(receiver.url), OTEL_TRACES_EXPORTER: 'none' })
  const read = await fetch(`${server.url}/v1/pets`, { headers: { authorization, traceparent: callerContext().traceparent } })
  assert.equal(read.status, 200)
  const line = await requestLogLine(server, read.headers.get('x-request-id'))
  assert.equal(line.trace_id, undefined)
})

test('a protocol the service does not send (grpc) stops start-up with one line naming the variable', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, PORT: '0', METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }
  const result = await runToExit(['src/server.ts'], env)
  assert.deepEqual({ code: result.code, stderr: result.stderr }, {
    code: 1,
    stderr: 'petstore: cannot start: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf (the default) or http/json, with the collector\'s OTLP/HTTP endpoint (port 4318)\n'
  })
})

/** A collector that only notes the headers of each export it is sent, and takes it. */
async function headerReceiver (t: TestContext): Promise<{ url: string, exports: () => IncomingHttpHeaders[] }> {
  const exports: IncomingHttpHeaders[] = []
  const server = createServer((request, response) => {
    request.resume().on('end', () => {
      exports.push(request.headers)
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => exports }
}

test('OTEL_EXPORTER_OTLP_HEADERS_FILE: the collector\'s credentials come from a file, and the traces variable still wins key by key', async (t) => {
  const receiver = await headerReceiver(t)
  const headersFile = join(tempDir(t), 'otlp-headers')
  writeFileSync(headersFile, 'authorization=Bearer%20collector-token,x-tenant=eu\n', { mode: 0o600 })
  const env = { ...tracingEnv(receiver.url, 'http/protobuf'), OTEL_EXPORTER_OTLP_HEADERS_FILE: headersFile, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=us' }
  const { server, authorization } = await startWithKey(t, { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, ...env })
  assert.equal((await fetch(`${server.url}/v1/pets`, { headers: { authorization } })).status, 200)
  const sent = await waitFor('an export', () => receiver.exports()[0])
  assert.deepEqual({ authorization: sent.authorization, tenant: sent['x-tenant'] }, { authorization: 'Bearer collector-token', tenant: 'us' })
})

test('OTEL_EXPORTER_OTLP_HEADERS with its _FILE too stops start-up with one line naming both, not the headers', async (t) => {
  const headersFile = join(tempDir(t), 'otlp-headers')
  writeFileSync(headersFile, 'authorization=Bearer%20collector-token\n')
  const env = {
    DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`,
    PORT: '0',
    METRICS_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20other-token',
    OTEL_EXPORTER_OTLP_HEADERS_FILE: headersFile
  }
  const result = await runToExit(['src/server.ts'], env)
  assert.deepEqual({ code: result.code, stderr: result.stderr }, {
    code: 1,
    stderr: 'petstore: cannot start: OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_HEADERS_FILE are both set: set only one of them\n'
  })
})
