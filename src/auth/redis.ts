import type { Redis } from 'ioredis'
import { describeCause, redactUrl } from '../store/store-errors.ts'

/** REDIS_URL is unusable: not a redis:// URL, or nothing responded in time. */
export class RedisStartError extends Error {}

/**
 * Connects to the Redis that instances share, failing within `timeoutMs` with a one-line
 * reason. Once connected it reconnects by itself; while it is away, commands fail at once
 * (no offline queue) or after `timeoutMs`, so nothing that asks Redis can hang a request.
 */
export async function connectRedis (url: string, timeoutMs: number): Promise<Redis> {
  const shown = JSON.stringify(redactUrl(url))
  if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) throw new RedisStartError(`REDIS_URL must be a redis:// or rediss:// URL, got ${shown}`)

  // Loaded only when Redis is configured: a single instance never pays for the client.
  const { Redis: RedisClient } = await import('ioredis')
  const redis = new RedisClient(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000)
  })
  let lastError: unknown
  redis.on('error', (error: unknown) => { lastError = error })
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no response within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([redis.connect(), deadline])
    return redis
  } catch (error) {
    redis.disconnect()
    throw new RedisStartError(`REDIS_URL ${shown} is unreachable: ${describeCause(lastError ?? error)}`)
  } finally {
    clearTimeout(timer)
  }
}
