import type { FastifyInstance, HTTPMethods } from 'fastify'
import { ApiError } from './errors.ts'

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Answers 405 with Allow for the methods a known path does not serve, instead of the
 * misleading 404 a router gives for them.
 */
export function allowOnly (app: FastifyInstance, url: string, allowed: HTTPMethods[]) {
  const allow = allowed.join(', ')
  app.route({
    method: METHODS.filter((method) => !allowed.includes(method)),
    url,
    schema: { hide: true },
    handler: async (request) => {
      throw new ApiError('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}.`, { headers: { allow } })
    }
  })
}
