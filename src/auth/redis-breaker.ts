import { BrokenCircuitError, circuitBreaker, CircuitState, ConsecutiveBreaker, handleAll } from 'cockatiel'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

/** What the service can tell of Redis: it replies, or the counters are kept off it. */
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
 * that no request waits on it, closes it when it succeeds, or keeps it open for another openMs
 * (half-open). One warning when it opens and one info line when it closes, whatever the traffic.
 *
 * cockatiel keeps the state. The counters' commands are not run through its execute(), which
 * would wrap every rate-limit check in promises: a request reads the state, and only a failure
 * is recorded. With a threshold of one failure, the successes it is not told of change nothing.
 */
export function redisBreaker (client: Redis, { openMs, log, onChange }: RedisBreakerOptions): RedisBreaker {
  const breaker = circuitBreaker(handleAll, { halfOpenAfter: openMs, breaker: new ConsecutiveBreaker(1) })
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let probing = false

  const ping = () => client.ping()
  const probeLater = () => {
    if (stopped) return
    timer = setTimeout(probe, openMs)
    timer.unref()
  }

  async function probe () {
    probing = true
    try {
      await breaker.execute(ping)
    } catch (error) {
      // A timer can fire a little before cockatiel's clock says openMs have passed.
      if (error instanceof BrokenCircuitError) probeLater()
    } finally {
      probing = false
    }
  }

  breaker.onBreak((reason) => {
    if (probing) {
      log.debug({ err: 'error' in reason ? reason.error : undefined }, 'Redis is still not replying')
    } else {
      log.warn({ err: 'error' in reason ? reason.error : undefined, retryInMs: openMs }, 'Redis is not responding: rate limits are not counted until it responds again')
      onChange('down')
    }
    probeLater()
  })
  breaker.onReset(() => {
    log.info('Redis responds again: rate limits are counted again')
    onChange('up')
  })

  const isClosed = () => breaker.state === CircuitState.Closed
  return {
    client,
    isClosed,
    failed (error: unknown) {
      if (!isClosed()) return
      breaker.execute(() => { throw error }).catch(() => {})
    },
    async check () {
      if (!isClosed()) return 'down'
      try {
        await breaker.execute(ping)
        return 'up'
      } catch {
        return 'down'
      }
    },
    stop () {
      stopped = true
      clearTimeout(timer)
    }
  }
}
