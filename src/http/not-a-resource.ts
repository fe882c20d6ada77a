import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify'
import { ApiError } from './errors.ts'

/** A route as onRoute sees it: its template with the scope's prefix (url), and without (routePath). */
export interface RecordedRoute { url: string, routePath: string, method: HTTPMethods | HTTPMethods[], schema?: { tags?: readonly string[] } }

/**
 * Replies 404 `not_found` to every method at a collection's path with a trailing slash: the
 * router would otherwise hand `/v1/pets/` to `/v1/pets/:petId` with an empty petId, whose 400
 * names a parameter the client never sent. Derived from the routes: wherever a scope serves
 * both `P` and `P/:param`, `P/` names no resource, and the message points to `P`, naming its
 * items by the collection's OpenAPI tag. A route of its own also keeps it under one route
 * template in the logs and metrics.
 *
 * Refused in the route's onRequest hook: after the scope's hooks (the bearer check, so 401
 * comes first as on every path of the scope) and before any body is read.
 */
export function refuseCollectionSlashes (scope: FastifyInstance, routes: readonly RecordedRoute[]) {
  const paths = new Set(routes.map((route) => route.routePath))
  const collections = new Set([...paths].filter((path) => PARAM_TAIL.test(path)).map((path) => path.replace(PARAM_TAIL, '')))
  for (const collection of collections) {
    if (!paths.has(collection) || paths.has(`${collection}/`)) continue
    const items = routes.find((route) => route.routePath === collection && route.schema?.tags?.[0] !== undefined)?.schema?.tags?.[0] ?? 'items'
    notAResource(scope, `${collection}/`, `the ${items} are at ${scope.prefix}${collection}, without the trailing slash.`)
  }
}

const PARAM_TAIL = /\/:[^/]+$/

function notAResource (scope: FastifyInstance, path: string, hint: string) {
  async function refuse (request: FastifyRequest) {
    throw new ApiError('not_found', `No route for ${request.method} ${scope.prefix}${path}; ${hint}`)
  }
  scope.route({ method: scope.supportedMethods, url: path, schema: { hide: true }, config: { refusesOnly: true }, onRequest: refuse, handler: refuse })
}
