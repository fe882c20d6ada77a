import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>

/**
 * Fastify's serializer compiler, compiling each distinct response schema once. Every operation
 * documents a dozen statuses that all reply with the Error schema, and each route is registered
 * twice (GET and HEAD): compiled one by one, the same code would be generated dozens of times
 * at every start.
 */
export const sharedSerializers: BuildSerializer = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options)
  const compiled = new Map<string, ReturnType<typeof compile>>()
  return (route) => {
    // A response's description and headers are documentation, which fast-json-stringify does not
    // read; only at the top level: nested properties may have those names.
    const key = JSON.stringify({ ...route.schema as object, description: undefined, headers: undefined })
    let serializer = compiled.get(key)
    if (!serializer) {
      serializer = compile(route)
      compiled.set(key, serializer)
    }
    return serializer
  }
}
