import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyRequest {
    /** Kept by routeTemplateOf: null until first asked, '' when no route matched. */
    routeTemplate: string | null
  }
}

/** Every request gets the field, in the shape Fastify's requests are made with. */
export const routeTemplates = fp(async function routeTemplates (app: FastifyInstance) {
  app.decorateRequest('routeTemplate', null)
}, { name: 'route-templates' })

/**
 * The template of the route that replied ('/v1/pets/:petId'), or undefined when none matched.
 * Fastify's request.routeOptions builds a twelve-field object on every read; the log line and
 * the metrics both need the template, so it is read once per request.
 */
export function routeTemplateOf (request: FastifyRequest): string | undefined {
  const template = request.routeTemplate ??= request.routeOptions.url ?? ''
  return template === '' ? undefined : template
}
