import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from './errors.ts'
import { type RecordedRoute, refuseCollectionSlashes } from './not-a-resource.ts'

// Node's module itself, not an ESM import: an import reads every export, and node:http's lazy
// WebSocket exports then load Node's whole bundled undici, which the server never uses.
const { METHODS } = process.getBuiltinModule('node:http')

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods each route template serves ('/v1/pets' → GET, HEAD, POST), as its routes were registered. */
    servedMethods: ReadonlyMap<string, ReadonlySet<string>>
  }
  interface FastifyContextConfig {
    /** A route that only refuses (a 405, a 404 for a path that names no resource): it serves nothing. */
    refusesOnly?: boolean
  }
}

/**
 * From here on, each path refuses the methods its routes do not serve with 405 and an Allow
 * field listing those they do, instead of the misleading 404 a router gives for them. Both lists
 * come from the routes as they are registered (onRoute), as hono's method-not-allowed reads its
 * router, so no method list is written twice.
 *
 * Every method Node's parser accepts is routed, not only Fastify's nine, so that PROPFIND or
 * PURGE on a known path is a 405 as DELETE is; CONNECT stays out, as Node hands it to the
 * 'connect' event (client-errors.ts), never to the router. TRACE is refused too: its reply is
 * the Error body, never the echo of the request that TRACE asks for (which would hand a page
 * the request's headers).
 *
 * The refusals of a path join the scope that serves it once the scope's plugin has returned
 * (avvio then runs its `after` callbacks): they run that scope's hooks, so a wrong method on a
 * pet path is still refused 401 first without a key. Refused in the route's onRequest hook,
 * after the scope's hooks and before any body is read, so a 405 never turns into a 413 or 415.
 * Installed before any route; a path's routes are registered together, in one plugin.
 */
export function refuseOtherMethods (app: FastifyInstance): void {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method)
  }
  const served = new Map<string, Set<string>>()
  const waiting = new Map<FastifyInstance, RecordedRoute[]>()
  app.decorate('servedMethods', served)
  // `${method} ${url}` of each refusal: a route added there later never gets in (the router
  // refuses a second route for a method), so it is not recorded.
  const refused = new Set<string>()
  app.addHook('onRoute', function record (route) {
    if (route.config?.refusesOnly) {
      for (const method of [route.method].flat()) refused.add(`${method} ${route.url}`)
      return
    }
    if ([route.method].flat().some((method) => refused.has(`${method} ${route.url}`))) return
    const scope = this
    let routes = waiting.get(scope)
    if (routes === undefined) {
      const scopeRoutes: RecordedRoute[] = []
      waiting.set(scope, routes = scopeRoutes)
      scope.after(() => {
        waiting.delete(scope)
        refuseInScope(scope, scopeRoutes, served)
      })
    }
    routes.push(route)
  })
}

/** The refusals of the paths one scope serves: 405 for the methods they do not, 404 after a collection's slash. */
function refuseInScope (scope: FastifyInstance, recorded: RecordedRoute[], served: Map<string, Set<string>>) {
  // A later onRoute hook (the reply cache's) may have refused a route after it was recorded.
  const routes = recorded.filter(({ url, method }) => [method].flat().every((one) => scope.hasRoute({ url, method: one })))
  for (const { url, method } of routes) {
    const methods = served.get(url) ?? new Set()
    served.set(url, methods)
    for (const one of [method].flat()) methods.add(one)
  }
  const paths = new Map(routes.map((route) => [route.routePath, route.url]))
  for (const [path, url] of paths) {
    const allowed = [...served.get(url)!].sort()
    const refused = scope.supportedMethods.filter((method) => !allowed.includes(method))
    if (refused.length > 0) refuse(scope, path, allowed.join(', '), refused)
  }
  refuseCollectionSlashes(scope, routes)
}

function refuse (scope: FastifyInstance, path: string, allow: string, refused: string[]) {
  async function refuseMethod (request: FastifyRequest) {
    throw new ApiError('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}.`, { headers: { allow } })
  }
  scope.route({ method: refused, url: path, schema: { hide: true }, config: { refusesOnly: true }, onRequest: refuseMethod, handler: refuseMethod })
}

/** refuseOtherMethods as a plugin, for an app whose plugins name the ones they need before them. */
export const methodNotAllowed = fp(async function methodNotAllowed (app: FastifyInstance) {
  refuseOtherMethods(app)
}, { name: 'method-not-allowed' })
