import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

/** What the service can tell of Redis: it answers, or the counters are kept off it. */
export type RedisState = 'up' | 'down'

/** A circuit breaker around the Redis that holds the rate-limit counters. */
export interface RedisBreaker {
  readonly client: Redis
  /** False while open: send no command, count nothing. */
  isClosed(): boolean
  /** A command sent while closed failed or timed out. */
  failed(error: unknown): void
  /** For /readyz?verbose: PINGs Redis while closed; while open, down without asking. */
  check(): Promise<RedisState>
  /** Stops probing; the app is closing. */
  stop(): void
}

export interface RedisBreakerOptions {
  /** REDIS_BREAKER_MS: how long the counters stay off Redis before a PING probes it. */
  openMs: number
  log: FastifyBaseLogger
  /** Each change between up and down, for the metrics. */
  onChange(state: RedisState): void
}

/**
 * Closed, the counters go to Redis. The first command that fails or times out opens the
 * breaker: for openMs no command is sent and requests pass uncounted, instead of each waiting
 * REDIS_TIMEOUT_MS for a hung Redis. Then one PING, sent by the breaker and not by a request so
 * that no request waits on it, closes it when answered, or keeps it open for another openMs
 * (half-open). One warning when it opens and one info line when it closes, whatever the traffic.
 * Hand-written: opossum, the well-kept breaker for Node, is not a dependency of the service.
 */
export function redisBreaker (client: Redis, { openMs, log, onChange }: RedisBreakerOptions): RedisBreaker {
  let state: 'closed' | 'open' | 'half-open' = 'closed'
  let timer: NodeJS.Timeout | undefined
  let stopped = false

  function probeLater () {
    state = 'open'
    if (stopped) return
    timer = setTimeout(probe, openMs)
    timer.unref()
  }

  async function probe () {
    state = 'half-open'
    try {
      await client.ping()
    } catch (error) {
      log.debug({ err: error }, 'Redis is still not answering')
      probeLater()
      return
    }
    state = 'closed'
    log.info('Redis answers again: rate limits are counted again')
    onChange('up')
  }

  function failed (error: unknown) {
    if (state !== 'closed') return
    log.warn({ err: error, retryInMs: openMs }, 'Redis is not answering: rate limits are not counted until it answers again')
    onChange('down')
    probeLater()
  }

  return {
    client,
    isClosed: () => state === 'closed',
    failed,
    async check () {
      if (state !== 'closed') return 'down'
      try {
        await client.ping()
        return 'up'
      } catch (error) {
        failed(error)
        return 'down'
      }
    },
    stop () {
      stopped = true
      clearTimeout(timer)
    }
  }
}
