import { readFileSync } from 'node:fs'
import { context, diag, DiagConsoleLogger, propagation, trace, type TextMapPropagator } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { CompositePropagator, diagLogLevelFromString, parseKeyPairsIntoRecord, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3'
import { defaultResource, detectResources, envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes, serviceInstanceIdDetector, type Resource } from '@opentelemetry/resources'
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ConsoleSpanExporter, ParentBasedSampler, SimpleSpanProcessor,
  TraceIdRatioBasedSampler, TracerProvider, type Sampler, type SpanLimits, type SpanProcessor
} from '@opentelemetry/sdk-trace'
import { settingOrFile } from '../config.ts'

// The parts of the OpenTelemetry SDK that traces need, configured by the standard OTEL_*
// variables as the Node SDK reads them, without the Node SDK itself: that one also installs the
// exporters of logs and metrics, Zipkin's and gRPC's, which this service never loads.

type Env = Record<string, string | undefined>

/** package.json's version, read once as tracing starts: service.version says which release sent a span. */
const SERVICE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/** What the SDK is told of each instrumentation: the tracer provider its spans go to. */
interface Instrumented { setTracerProvider: (provider: TracerProvider) => void }

/** The started SDK: shutdown() sends the spans still queued and stops exporting. */
export interface TracingSdk { shutdown: () => Promise<void> }

export interface SdkOptions {
  /** service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES gives one. */
  serviceName: string | undefined
  instrumentations: Instrumented[]
}

/**
 * Registers the context manager, the propagator and a tracer provider with the OpenTelemetry
 * API. With OTEL_TRACES_EXPORTER=none no provider is registered, so no span is recorded.
 * Throws, naming the variable, on an exporter or protocol it does not have, rather than send
 * spans where no collector reads them.
 */
export function startTracingSdk (env: Env, { serviceName, instrumentations }: SdkOptions): TracingSdk {
  const logLevel = env.OTEL_LOG_LEVEL?.trim()
  if (logLevel) diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) })
  const spanProcessors = spanProcessorsOf(env)
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const propagator = propagatorOf(env)
  if (propagator) propagation.setGlobalPropagator(propagator)
  if (spanProcessors.length === 0) return { shutdown: async () => {} }
  const provider = new TracerProvider({ resource: resourceOf(serviceName), sampler: samplerOf(env), spanLimits: spanLimitsOf(env), spanProcessors })
  trace.setGlobalTracerProvider(provider)
  for (const instrumentation of instrumentations) instrumentation.setTracerProvider(provider)
  return { shutdown: () => provider.shutdown() }
}

/** OTEL_TRACES_EXPORTER: otlp (the default), console, or none. */
function spanProcessorsOf (env: Env): SpanProcessor[] {
  const names = listOf(env.OTEL_TRACES_EXPORTER) ?? ['otlp']
  if (names.includes('none')) return []
  return names.map((name) => {
    if (name === 'console') return new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() })
    if (name !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER=${name} is not supported: use otlp, console or none`)
    return new BatchSpanProcessor({
      exporter: otlpExporterOf(env),
      maxQueueSize: positiveNumberOf(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      scheduledDelayMillis: positiveNumberOf(env, 'OTEL_BSP_SCHEDULE_DELAY'),
      exportTimeoutMillis: positiveNumberOf(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
      maxExportBatchSize: positiveNumberOf(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE')
    })
  })
}

/**
 * The exporters read the endpoint, headers, timeout, compression and certificate themselves;
 * headers kept in a file (exportHeadersOf) are handed to them.
 */
function otlpExporterOf (env: Env): OtlpProtobufExporter | OtlpJsonExporter {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = env[name]?.trim() || 'http/protobuf'
  const headers = exportHeadersOf(env)
  if (protocol === 'http/protobuf') return new OtlpProtobufExporter(headers && { headers })
  if (protocol === 'http/json') return new OtlpJsonExporter(headers && { headers })
  throw new Error(`${name}=${protocol} is not supported: use http/protobuf (the default) or http/json, with the collector's OTLP/HTTP endpoint (port 4318)`)
}

/**
 * The export headers carry the collector's credentials (authorization=…), so, as the URLs of
 * src/config.ts, each variable may instead name a file: OTEL_EXPORTER_OTLP_HEADERS_FILE,
 * OTEL_EXPORTER_OTLP_TRACES_HEADERS_FILE. With either set, both variables are read here, the
 * traces one winning key by key as in the exporter; undefined leaves the exporter to read them.
 */
function exportHeadersOf (env: Env): Record<string, string> | undefined {
  if (!env.OTEL_EXPORTER_OTLP_HEADERS_FILE && !env.OTEL_EXPORTER_OTLP_TRACES_HEADERS_FILE) return undefined
  return {
    ...parseKeyPairsIntoRecord(settingOrFile(env, 'OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyPairsIntoRecord(settingOrFile(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'))
  }
}

/** OTEL_PROPAGATORS: tracecontext,baggage by default; b3, b3multi; none for no propagation. */
function propagatorOf (env: Env): TextMapPropagator | undefined {
  const names = [...new Set(listOf(env.OTEL_PROPAGATORS) ?? ['tracecontext', 'baggage'])]
  if (names.includes('none')) return undefined
  const propagators = names.flatMap((name) => {
    switch (name) {
      case 'tracecontext': return [new W3CTraceContextPropagator()]
      case 'baggage': return [new W3CBaggagePropagator()]
      case 'b3': return [new B3Propagator()]
      case 'b3multi': return [new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER })]
      default:
        diag.warn(`OTEL_PROPAGATORS: no propagator named "${name}"`)
        return []
    }
  })
  return propagators.length === 0 ? undefined : new CompositePropagator({ propagators })
}

/**
 * The Node SDK's default resource: the service's instance, process, host and OS, and
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; with service.version, package.json's unless
 * OTEL_RESOURCE_ATTRIBUTES gives one (a merged resource's attributes win over the one merged into).
 */
function resourceOf (serviceName: string | undefined): Resource {
  const detected = resourceFromAttributes({ 'service.version': SERVICE_VERSION })
    .merge(defaultResource())
    .merge(detectResources({ detectors: [serviceInstanceIdDetector, processDetector, hostDetector, osDetector, envDetector] }))
  return serviceName === undefined ? detected : detected.merge(resourceFromAttributes({ 'service.name': serviceName }))
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG; undefined leaves the default, parentbased_always_on. */
function samplerOf (env: Env): Sampler | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim()
  const ratio = () => {
    const arg = numberOf(env, 'OTEL_TRACES_SAMPLER_ARG')
    if (arg !== undefined && arg >= 0 && arg <= 1) return arg
    diag.error(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got ${JSON.stringify(env.OTEL_TRACES_SAMPLER_ARG)}): sampling every trace`)
    return 1
  }
  switch (name) {
    case undefined: case '': return undefined
    case 'always_on': return new AlwaysOnSampler()
    case 'always_off': return new AlwaysOffSampler()
    case 'traceidratio': return new TraceIdRatioBasedSampler(ratio())
    case 'parentbased_always_on': return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) })
    default:
      diag.error(`OTEL_TRACES_SAMPLER: no sampler named "${name}": using parentbased_always_on`)
      return undefined
  }
}

/** The OTEL_SPAN_*_LIMIT variables, each falling back to the general OTEL_ATTRIBUTE_* one where there is one. */
function spanLimitsOf (env: Env): SpanLimits {
  const first = (...names: string[]) => names.map((name) => numberOf(env, name)).find((value) => value !== undefined)
  return {
    attributeCountLimit: first('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'),
    attributeValueLengthLimit: first('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
    eventCountLimit: first('OTEL_SPAN_EVENT_COUNT_LIMIT'),
    linkCountLimit: first('OTEL_SPAN_LINK_COUNT_LIMIT'),
    attributePerEventCountLimit: first('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT'),
    attributePerLinkCountLimit: first('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT')
  }
}

/** A comma-separated list, trimmed; undefined when it names nothing. */
function listOf (value: string | undefined): string[] | undefined {
  const items = (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')
  return items.length === 0 ? undefined : items
}

function numberOf (env: Env, name: string): number | undefined {
  const text = env[name]?.trim()
  if (!text) return undefined
  const value = Number(text)
  if (Number.isFinite(value)) return value
  diag.warn(`${name} is not a number (got ${JSON.stringify(text)}): using the default`)
  return undefined
}

function positiveNumberOf (env: Env, name: string): number | undefined {
  const value = numberOf(env, name)
  if (value === undefined || value > 0) return value
  diag.warn(`${name} must be above 0 (got ${value}): using the default`)
  return undefined
}
