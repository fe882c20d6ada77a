import { readFileSync } from 'node:fs'
import { Ajv, type ErrorObject } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { envSchema } from 'env-schema'
import { Type, type Static } from 'typebox'

/** Every setting the service reads, with its default. Only the entry points read process.env. */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ pattern: '^\\S+$', default: '127.0.0.1' }),
  DATABASE_URL: Type.String({ minLength: 1, default: 'sqlite:./data/petstore.db' }),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000 }),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 2000 }),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 2000 }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s?#]+/v1/*$' })),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  DEPRECATION_DATE: Type.String({ format: 'date-time', default: '2026-01-01T00:00:00Z' }),
  SUNSET_DATE: Type.String({ format: 'date-time', default: '2030-12-05T00:00:00Z' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10000 }),
  KEY_CACHE_TTL_MS: Type.Integer({ minimum: 0, default: 1000 }),
  REPLY_CACHE_ENTRIES: Type.Integer({ minimum: 0, default: 10000 }),
  REPLY_CACHE_MAX_BYTES: Type.Integer({ minimum: 0, default: 33554432 }),
  SHUTDOWN_DRAIN_MS: Type.Integer({ minimum: 0, default: 5000 }),
  REDIS_KEY_PREFIX: Type.String({ minLength: 1, maxLength: 100, default: 'petstore:' }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 1000 }),
  FAILED_AUTH_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10000 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000 }),
  CONNECTIONS_CHECK_INTERVAL_MS: Type.Integer({ minimum: 10, default: 1000 }),
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, default: 1024 }),
  MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  REDIS_BREAKER_MS: Type.Integer({ minimum: 1, default: 5000 }),
  SEND_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 30000 }),
  MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 0, default: 32 }),
  FIRST_BYTE_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 2000 }),
  METRICS_HOST: Type.String({ pattern: '^\\S+$', default: '127.0.0.1' }),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
  FIRST_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  STAGING_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s?#]+/v1/*$' }))
}, { additionalProperties: false })

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {}

/**
 * Settings read under an earlier name: the old name is still taken while the new one is unset,
 * so an upgrade keeps the operator's value (renamedSettings says so, for the start-up log).
 */
const RENAMED: ReadonlyArray<[old: string, current: keyof Config]> = [
  ['ANSWER_CACHE_ENTRIES', 'REPLY_CACHE_ENTRIES'],
  ['ANSWER_CACHE_MAX_BYTES', 'REPLY_CACHE_MAX_BYTES']
]

/**
 * Settings that hold a password: each may instead be read from the file that NAME_FILE names,
 * as the official postgres image reads POSTGRES_PASSWORD_FILE, so that a container secret
 * (/run/secrets/…) never has to be put in the environment, where `ps e`, `docker inspect` and
 * crash reports see it.
 */
export const SECRETS: readonly string[] = ['DATABASE_URL', 'REDIS_URL']

// ajv's coercion takes " 80", "1e3", "0x50" and "-1" for numbers; a setting is digits or an error.
const WHOLE_NUMBER = /^(0|[1-9]\d*)$/
const INTEGER_NAMES = new Set(Object.entries(ConfigSchema.properties).flatMap(([name, schema]) => 'type' in schema && schema.type === 'integer' ? [name] : []))
// One ajv for the process, so the schema is compiled once (env-schema's default builds a new one
// per call). Its options are env-schema's: defaults, coercion of digits, unknown variables dropped.
// validateSchema off: checking a schema against the meta-schema compiles that meta-schema first;
// the schema is fixed and test/contract/schemas.test.ts checks it.
const ajv = addFormatsModule.default(new Ajv({ useDefaults: true, coerceTypes: true, removeAdditional: true, validateSchema: false }))

/**
 * Parses the environment once. Fails with a one-line message that names the variable,
 * because that line is all an operator sees when a deploy does not start.
 */
export function loadConfig (env: Record<string, string | undefined>): Config {
  const set: Record<string, string> = {}
  for (const name of SECRETS) {
    const text = settingOrFile(env, name)
    if (text !== undefined) set[name] = text
  }
  for (const [name, text] of Object.entries(env)) {
    if (SECRETS.includes(name)) continue
    // An empty variable is unset: `PORT=` in a compose file means "the default".
    if (text === undefined || text === '' || !Object.hasOwn(ConfigSchema.properties, name)) continue
    if (INTEGER_NAMES.has(name) && !WHOLE_NUMBER.test(text)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(text)}`)
    set[name] = text
  }
  for (const { old, current, used } of renamedSettings(env)) {
    if (!used) continue
    const text = env[old]!
    if (!WHOLE_NUMBER.test(text)) throw new ConfigError(`${old} must be a whole number, got ${JSON.stringify(text)}`)
    set[current] = text
  }
  const config = parse(set)
  // Trusting every hop takes the left-most X-Forwarded-For entry, which the client writes.
  if (typeof config.TRUST_PROXY === 'string' && config.TRUST_PROXY.toLowerCase() === 'true') {
    throw new ConfigError('TRUST_PROXY=true would let every client choose its own address; set the number of proxies in front (e.g. 1) or their comma-separated addresses/CIDRs (e.g. 10.0.0.5)')
  }
  // Unset, the first-byte timeout follows a header timeout set below its default, so a
  // HEADERS_TIMEOUT_MS that started before still starts.
  if (set.FIRST_BYTE_TIMEOUT_MS === undefined) config.FIRST_BYTE_TIMEOUT_MS = Math.min(config.FIRST_BYTE_TIMEOUT_MS, config.HEADERS_TIMEOUT_MS)
  checkOrder(config, 'HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS', 'must not exceed')
  // Past its first byte a connection is the header timeout's: a longer wait for that byte would
  // let a silent connection outlast one that is sending.
  checkOrder(config, 'FIRST_BYTE_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS', 'must not exceed')
  // No drain at all needs no time; a drain needs time left for the requests in flight.
  if (config.SHUTDOWN_DRAIN_MS !== 0) checkOrder(config, 'SHUTDOWN_DRAIN_MS', 'SHUTDOWN_TIMEOUT_MS', 'must be less than')
  if (config.PUBLIC_URL !== undefined) config.PUBLIC_URL = config.PUBLIC_URL.replace(/\/+$/, '')
  if (config.STAGING_URL !== undefined) config.STAGING_URL = config.STAGING_URL.replace(/\/+$/, '')
  return config
}

/**
 * The value of `name`, from the environment or from the file `${name}_FILE` names; undefined when
 * neither is set. The file's content is taken as it is, less one line end (\n or \r\n) at its
 * end, as `echo` and editors write one. Messages name the variable and the file, never the value.
 */
export function settingOrFile (env: Record<string, string | undefined>, name: string): string | undefined {
  const fileName = `${name}_FILE`
  const path = env[fileName]
  const direct = env[name]
  if (!path) return direct === '' ? undefined : direct
  if (direct) throw new ConfigError(`${name} and ${fileName} are both set: set only one of them`)
  let content: string
  try {
    content = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(`${fileName} names a file that cannot be read: ${path} (${unreadable(error)})`)
  }
  const value = content.replace(/\r?\n$/, '')
  // An empty file would quietly mean the default (another database); a second line is no URL.
  if (value === '') throw new ConfigError(`${fileName} names an empty file: ${path}`)
  if (/[\r\n]/.test(value)) throw new ConfigError(`${fileName} names a file of more than one line: ${path}`)
  return value
}

/** Why a file could not be read, in words; the code for any other reason. */
function unreadable (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  switch (code) {
    case 'ENOENT': return 'no such file'
    case 'EACCES': case 'EPERM': return 'permission denied'
    case 'EISDIR': return 'it is a folder'
    case 'ENOTDIR': return 'a part of the path is not a folder'
    default: return code ?? String(error)
  }
}

/** A setting set under its old name, and whether that value is used (it is unless the new name is set too). */
export interface RenamedSetting { old: string, current: string, used: boolean, message: string }

/** The settings of env set under an old name, each with the line to warn with at start. */
export function renamedSettings (env: Record<string, string | undefined>): RenamedSetting[] {
  return RENAMED.flatMap(([old, current]) => {
    if (!env[old]) return []
    const used = !env[current]
    const message = used
      ? `${old} is now named ${current}; the old name is still read while ${current} is unset`
      : `${old} is now named ${current}, which is set too: ${old} is ignored`
    return [{ old, current, used, message }]
  })
}

/** env-schema applies the defaults and turns digits into numbers; its first error is reworded to name the variable. */
function parse (set: Record<string, string>): Config {
  try {
    // env: false: the caller hands in the environment (tests pass literals); no .env file is read.
    return envSchema<Config>({ schema: ConfigSchema, data: set, env: false, ajv })
  } catch (error) {
    const first = (error as { errors?: ErrorObject[] }).errors?.[0]
    if (!first) throw error
    const name = first.instancePath.slice(1)
    const text = set[name]
    // A password stays out of the message, which goes to logs.
    if (SECRETS.includes(name)) throw new ConfigError(`${name} ${expectation(name, first)}`)
    const got = text !== undefined && INTEGER_NAMES.has(name) ? Number(text) : text
    throw new ConfigError(`${name} ${expectation(name, first)} (got ${JSON.stringify(got)})`)
  }
}

/**
 * What a setting must be, in words: ajv's own messages show the schema ("must match pattern
 * "^https?://…"", "must be equal to one of the allowed values"), which tells an operator neither
 * what to write nor what is allowed.
 */
function expectation (name: string, error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'minimum': return `must be at least ${String(params.limit)}`
    case 'maximum': return `must be at most ${String(params.limit)}`
    case 'maxLength': return `must be at most ${String(params.limit)} characters long`
    case 'enum': return `must be one of ${listOf(params.allowedValues as unknown[])}`
    case 'format': return params.format === 'date-time'
      ? 'must be a date and time with a time zone, such as 2030-12-05T00:00:00Z'
      : `must be a ${String(params.format)}`
    case 'pattern': return PATTERN_MEANINGS[name] ?? 'is not in the expected form'
    default: return error.message ?? 'is invalid'
  }
}

/** The rule each pattern of ConfigSchema stands for. */
const PATTERN_MEANINGS: Record<string, string> = {
  HOST: 'must be a host name or address, without spaces',
  METRICS_HOST: 'must be a host name or address, without spaces',
  PUBLIC_URL: 'must be an absolute http:// or https:// address ending in /v1, without query or fragment, such as https://api.example.com/v1',
  STAGING_URL: 'must be an absolute http:// or https:// address ending in /v1, without query or fragment, such as https://staging.example.com/v1'
}

/** "a, b or c", each value in quotes as it is written in the environment. */
function listOf (values: unknown[]): string {
  const quoted = values.map((value) => JSON.stringify(value))
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)!}`
}

type Timeout = 'FIRST_BYTE_TIMEOUT_MS' | 'HEADERS_TIMEOUT_MS' | 'REQUEST_TIMEOUT_MS' | 'SHUTDOWN_DRAIN_MS' | 'SHUTDOWN_TIMEOUT_MS'

/** Settings that only make sense in order: Node refuses a header timeout above the request timeout, for one. */
function checkOrder (config: Config, smaller: Timeout, larger: Timeout, relation: 'must not exceed' | 'must be less than') {
  const a = config[smaller]
  const b = config[larger]
  if (relation === 'must not exceed' ? a > b : a >= b) {
    throw new ConfigError(`${smaller} ${relation} ${larger} (got ${a} and ${b})`)
  }
}
