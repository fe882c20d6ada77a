import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import { credentialsOf, isUsable } from './credentials.ts'

/**
 * The rate limit of the public routes: everything outside the pet operations that is not a
 * probe, that is the docs page and its script, the OpenAPI document, unknown paths and wrong
 * methods. None needs a key, but
 * each reply is counted, so that scanning paths or pulling the docs script flat out is not
 * free: against the caller's key when it sends a usable one, else against its address (the
 * failed-auth limit), and it carries that limit's RateLimit fields.
 */
export function publicRoutesLimit ({ keys, now, limits }: FastifyInstance): onRequestAsyncHookHandler {
  return async function countPublicRequest (request, reply) {
    if (limits.mayRefuseAddress()) await limits.refuseSpentAddress(request, reply)
    const { key } = credentialsOf(request)
    const at = now()
    const record = key === undefined ? undefined : keys.cached(key, at) ?? await keys.lookUp(key, at)
    if (!record || !isUsable(record, at)) return await limits.countAnonymous(request, reply)
    // admitKey, the next hook, counts it against the key.
    request.apiKeyId = record.id
  }
}
