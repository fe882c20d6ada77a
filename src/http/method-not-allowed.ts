import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify'
import { createRequire } from 'node:module'
import { ApiError } from './errors.ts'

// Required, not imported: an ESM import of node:http loads Node's bundled undici (client-errors.ts).
const { METHODS } = createRequire(import.meta.url)('node:http') as typeof import('node:http')

/**
 * Lets the router see every method Node's parser accepts, not only Fastify's nine, so that a
 * known path answers PROPFIND or PURGE with 405 as it answers DELETE, instead of a 404 saying
 * the path does not exist. CONNECT stays out: Node hands it to the 'connect' event
 * (client-errors.ts), never to the router. Called before any route is added.
 */
export function routeEveryMethod (app: FastifyInstance) {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method)
  }
}

/**
 * Answers 405 with Allow for the methods a known path does not serve, instead of the
 * misleading 404 a router gives for them. TRACE too: its answer is the Error body, never the
 * echo of the request that TRACE asks for (which would hand a page the request's headers).
 * Refused in the route's onRequest hook, after the scope's hooks (the bearer check) and before
 * any body is read, so a 405 never turns into a 413 or 415.
 */
export function allowOnly (app: FastifyInstance, url: string, allowed: HTTPMethods[]) {
  const allow = allowed.join(', ')
  async function refuse (request: FastifyRequest) {
    throw new ApiError('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}.`, { headers: { allow } })
  }
  app.route({
    method: app.supportedMethods.filter((method) => !(allowed as string[]).includes(method)),
    url,
    schema: { hide: true },
    onRequest: refuse,
    handler: refuse
  })
}
