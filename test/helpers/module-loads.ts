import { registerHooks } from 'node:module'

/**
 * Preloaded with --import by tests that must know which packages a process loads: writes
 * "loaded URL from PARENT" on stderr for each module of the OpenTelemetry SDK and its
 * instrumentations, or of @fastify/otel, that it resolves. Not @opentelemetry/api: prom-client
 * loads that small, no-op-by-default API in every process.
 */
const WATCHED = /\/node_modules\/(?:@opentelemetry\/(?!api\/)|@fastify\/otel\/)/

registerHooks({
  resolve (specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    if (WATCHED.test(resolved.url)) process.stderr.write(`loaded ${resolved.url} from ${context.parentURL}\n`)
    return resolved
  }
})
