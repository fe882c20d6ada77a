import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

/** One span as OTLP/JSON carries it, its attributes flattened to key → value. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status: { code?: number, message?: string }
  scope: string
  resource: Record<string, unknown>
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT: OTEL_EXPORTER_OTLP_ENDPOINT; exporters post to /v1/traces under it. */
  url: string
  /** Every span decoded so far (OTLP/JSON posts only). */
  spans(): ReceivedSpan[]
  /** Every post: its path, content type and raw body. */
  posts(): Array<{ path: string, contentType: string, body: Buffer }>
}

interface JsonAttribute { key: string, value: Record<string, unknown> }
interface JsonSpan { traceId: string, spanId: string, parentSpanId?: string, name: string, kind: number, attributes?: JsonAttribute[], status?: ReceivedSpan['status'] }
interface JsonExport {
  resourceSpans: Array<{ resource?: { attributes?: JsonAttribute[] }, scopeSpans: Array<{ scope?: { name: string }, spans: JsonSpan[] }> }>
}

function flatten (attributes: JsonAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]))
}

/**
 * A trace collector for tests: node:http on a free loopback port, replying to every POST with
 * success. OTLP/JSON bodies are decoded into spans; others (protobuf) are kept raw. Stopped when
 * the test ends.
 */
export async function startOtlpReceiver (t: TestContext): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const posts: Array<{ path: string, contentType: string, body: Buffer }> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? ''
      const body = Buffer.concat(chunks)
      posts.push({ path: request.url ?? '', contentType, body })
      if (contentType.startsWith('application/json')) {
        const exported = JSON.parse(body.toString('utf8')) as JsonExport
        for (const { resource, scopeSpans } of exported.resourceSpans) {
          for (const { scope, spans: scoped } of scopeSpans) {
            for (const span of scoped) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: flatten(span.attributes),
                status: span.status ?? {},
                scope: scope?.name ?? '',
                resource: flatten(resource?.attributes)
              })
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': contentType.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' })
      response.end(contentType.startsWith('application/json') ? '{}' : '')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, spans: () => [...spans], posts: () => [...posts] }
}
