import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { XStatic } from 'typebox/schema'

/** Every setting the service reads, with its default. Only the entry points read process.env. */
export const ConfigSchema = {
  type: 'object',
  required: ['PORT', 'HOST', 'DATABASE_URL', 'DATABASE_POOL_MAX', 'DATABASE_STATEMENT_TIMEOUT_MS', 'DATABASE_CONNECT_TIMEOUT_MS', 'REDIS_TIMEOUT_MS', 'LOG_LEVEL', 'DEPRECATION_DATE', 'SUNSET_DATE', 'SHUTDOWN_TIMEOUT_MS', 'KEY_CACHE_TTL_MS', 'ANSWER_CACHE_ENTRIES', 'SHUTDOWN_DRAIN_MS', 'REDIS_KEY_PREFIX', 'IDEMPOTENCY_TTL_HOURS', 'RATE_LIMIT_PER_MINUTE', 'FAILED_AUTH_LIMIT_PER_MINUTE', 'REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS', 'KEEP_ALIVE_TIMEOUT_MS', 'CONNECTIONS_CHECK_INTERVAL_MS', 'MAX_CONNECTIONS', 'MAX_EVENT_LOOP_DELAY_MS', 'SEND_TIMEOUT_MS', 'MAX_CONNECTIONS_PER_ADDRESS'],
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', pattern: '^\\S+$', default: '127.0.0.1' },
    DATABASE_URL: { type: 'string', minLength: 1, default: 'sqlite:./data/petstore.db' },
    DATABASE_POOL_MAX: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    DATABASE_STATEMENT_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 5000 },
    DATABASE_CONNECT_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 2000 },
    REDIS_URL: { type: 'string', minLength: 1 },
    REDIS_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 2000 },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s?#]+/v1/*$' },
    LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    DEPRECATION_DATE: { type: 'string', format: 'date-time', default: '2026-01-01T00:00:00Z' },
    SUNSET_DATE: { type: 'string', format: 'date-time', default: '2030-12-05T00:00:00Z' },
    SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 0, default: 10000 },
    KEY_CACHE_TTL_MS: { type: 'integer', minimum: 0, default: 1000 },
    ANSWER_CACHE_ENTRIES: { type: 'integer', minimum: 0, default: 10000 },
    SHUTDOWN_DRAIN_MS: { type: 'integer', minimum: 0, default: 5000 },
    REDIS_KEY_PREFIX: { type: 'string', minLength: 1, maxLength: 100, default: 'petstore:' },
    TRUST_PROXY: { type: 'string', minLength: 1 },
    IDEMPOTENCY_TTL_HOURS: { type: 'integer', minimum: 1, maximum: 720, default: 24 },
    RATE_LIMIT_PER_MINUTE: { type: 'integer', minimum: 0, default: 1000 },
    FAILED_AUTH_LIMIT_PER_MINUTE: { type: 'integer', minimum: 1, default: 60 },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 10000 },
    HEADERS_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 5000 },
    KEEP_ALIVE_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 5000 },
    CONNECTIONS_CHECK_INTERVAL_MS: { type: 'integer', minimum: 10, default: 1000 },
    MAX_CONNECTIONS: { type: 'integer', minimum: 1, default: 1024 },
    MAX_EVENT_LOOP_DELAY_MS: { type: 'integer', minimum: 0, default: 1000 },
    SEND_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 30000 },
    MAX_CONNECTIONS_PER_ADDRESS: { type: 'integer', minimum: 0, default: 256 }
  }
} as const

export type Config = XStatic<typeof ConfigSchema>

export class ConfigError extends Error {}

const INTEGER_TEXT = /^(0|[1-9]\d*)$/
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
// ajv rather than TypeBox's Value module: the service already loads ajv, and Value alone adds
// a noticeable share of start-up time. validateSchema off: checking a schema against the
// JSON Schema meta-schema compiles that meta-schema first, a tenth of start-up; the schemas are
// fixed and test/schemas.test.ts checks them.
const validateConfig = addFormats(new Ajv({ useDefaults: true, allErrors: false, strict: false, validateSchema: false })).compile(ConfigSchema)

/**
 * Parses the environment once. Fails with a one-line message that names the variable,
 * because that line is all an operator sees when a deploy does not start.
 */
export function loadConfig (env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const text = env[name]
    if (text === undefined || text === '') continue
    const isInteger = (schema as { type?: string }).type === 'integer'
    if (isInteger && !INTEGER_TEXT.test(text)) {
      throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(text)}`)
    }
    raw[name] = isInteger ? Number(text) : text
  }
  const config = raw
  const error = validateConfig(config) ? undefined : validateConfig.errors?.[0]
  if (error) {
    const name = error.instancePath.replace(/^\//, '')
    throw new ConfigError(`${name} is invalid: ${error.message ?? 'bad value'} (got ${JSON.stringify(config[name])})`)
  }
  checkOrder(config, 'HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS', 'must not exceed')
  // No drain at all needs no time; a drain needs time left for the requests in flight.
  if (config.SHUTDOWN_DRAIN_MS !== 0) checkOrder(config, 'SHUTDOWN_DRAIN_MS', 'SHUTDOWN_TIMEOUT_MS', 'must be less than')
  if (typeof config.PUBLIC_URL === 'string') config.PUBLIC_URL = config.PUBLIC_URL.replace(/\/+$/, '')
  return config as Config
}

/** Settings that only make sense in order: Node refuses a header timeout above the request timeout. */
function checkOrder (config: Record<string, unknown>, smaller: string, larger: string, relation: 'must not exceed' | 'must be less than') {
  const a = config[smaller] as number
  const b = config[larger] as number
  if (relation === 'must not exceed' ? a > b : a >= b) {
    throw new ConfigError(`${smaller} ${relation} ${larger} (got ${a} and ${b})`)
  }
}
