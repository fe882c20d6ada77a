import { setTimeout } from 'node:timers/promises'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import { pathOf } from '../http/logging.ts'
import type { Store } from '../store/types.ts'
import type { StoreSpan } from '../store/timed-store.ts'
import { startTracingSdk } from './tracing-sdk.ts'

// Imported only when OTEL_* turns tracing on (src/server.ts): a service without tracing never
// loads the OpenTelemetry SDK that this module pulls in.

/** What the app needs of tracing (AppDeps.tracing); absent when tracing is off. */
export interface Tracing {
  /** @fastify/otel: one server span per request, named "METHOD /route/:template". */
  plugin: FastifyPluginCallback
  /** Runs a store call in a span of its own under the request's span. */
  storeSpan: (kind: Store['kind']) => StoreSpan
  /** `,"trace_id":…,"span_id":…` of the request's span for its log line; '' when it is not recorded. */
  logFields: (request: FastifyRequest) => string
  /** Sends the spans still waiting, for at most SHUTDOWN_FLUSH_MS, and stops the SDK. */
  shutdown: () => Promise<void>
}

// Probes and scrapes every few seconds would bury the requests that matter.
const UNTRACED_PATHS = new Set(['/healthz', '/readyz'])

// A collector that does not respond must not hold a stop up until SHUTDOWN_TIMEOUT_MS.
const SHUTDOWN_FLUSH_MS = 2000

const DB_SYSTEM: Record<Store['kind'], string> = { sqlite: 'sqlite', postgres: 'postgresql' }

/**
 * Starts the OpenTelemetry SDK (./tracing-sdk.ts), configured by the standard OTEL_* variables
 * (endpoint, protocol, sampler, batch delays, resource), for traces only: metrics stay on
 * /metrics and logs on stdout. Must run before the PostgreSQL driver is loaded, which its
 * instrumentation patches.
 */
export function startTracing (env: Record<string, string | undefined>): Tracing {
  const logFields = new WeakMap<FastifyRequest, string>()
  const fastifyInstrumentation = new FastifyOtelInstrumentation({
    ignorePaths: ({ url }) => UNTRACED_PATHS.has(url),
    // Hooks stay inside the request span without a span each; the handler keeps its own span,
    // which also carries the request's context across body parsing to the store calls.
    instrumentHooks: false,
    // The log line with the same trace_id holds the error and its stack.
    recordExceptions: false,
    requestHook: (span, request) => {
      const route = request.routeOptions.url
      span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
      // The path without its query, as in the log line: a secret put in a query string stays out.
      span.setAttribute('url.path', pathOf(request.url))
      if (span.isRecording()) {
        const { traceId, spanId } = span.spanContext()
        logFields.set(request, `,"trace_id":"${traceId}","span_id":"${spanId}"`)
      }
    }
  })
  const sdk = startTracingSdk(env, {
    serviceName: namesService(env) ? undefined : 'petstore',
    instrumentations: [fastifyInstrumentation, new PgInstrumentation({ requireParentSpan: true })]
  })
  const tracer = trace.getTracer('petstore')
  return {
    plugin: fastifyInstrumentation.plugin(),
    storeSpan: (kind) => storeSpan(tracer, DB_SYSTEM[kind]),
    logFields: (request) => logFields.get(request) ?? '',
    shutdown: () => Promise.race([sdk.shutdown(), setTimeout(SHUTDOWN_FLUSH_MS, undefined, { ref: false })])
  }
}

/** OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES, names the service; else "petstore". */
function namesService (env: Record<string, string | undefined>): boolean {
  return Boolean(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
}

/**
 * A span "store.OPERATION" around each store call made inside a traced request, the active span
 * while the call runs (so PostgreSQL's query spans nest under it). Calls outside any request (the
 * idempotency purge, readiness checks on a timer) make none.
 */
function storeSpan (tracer: Tracer, dbSystem: string): StoreSpan {
  return (operation, method, store, args) => {
    const parent = context.active()
    if (trace.getSpan(parent) === undefined) return method.apply(store, args)
    const span = tracer.startSpan(`store.${operation}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'db.system.name': dbSystem, 'petstore.store.operation': operation }
    }, parent)
    let result: unknown
    try {
      result = context.with(trace.setSpan(parent, span), method, store, ...args)
    } catch (error) {
      endFailed(span, error)
      throw error
    }
    if (result instanceof Promise) {
      // A branch of its own: the caller still gets the call's own promise, and its rejection.
      result.then(() => span.end(), (error: unknown) => endFailed(span, error))
    } else {
      span.end()
    }
    return result
  }
}

function endFailed (span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
  span.end()
}
