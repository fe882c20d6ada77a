import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { hostname } from 'node:os'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import pino, { type Bindings, type ChildLoggerOptions, type Logger, type LoggerOptions } from 'pino'
import type { Config } from '../config.ts'

/**
 * A caller's X-Request-Id that is kept: A-Z a-z 0-9 . _ : - alone, with no run of 43 or more key
 * characters (A-Z a-z 0-9 - _, as auth/api-key.ts makes them) and no psk_ or psk- in any case.
 * A key's secret is 43 key characters, so an id that holds one, however it is wrapped
 * (req-<secret>, <secret>-1, <secret>_retry2), has such a run; the prefix catches a key cut
 * short. Each run is taken whole (42 at most, then no key character), so a test is linear in
 * the id's length and allocates nothing; the length is checked before it.
 */
const KEPT_REQUEST_ID = /^(?![^]*?psk[_-])(?:[\w-]{1,42}(?![\w-])|[.:])+$/i
const LONGEST_REQUEST_ID = 128

/**
 * Text that looks like an API key (auth/api-key.ts: psk_ and 43 base64url characters), in any
 * spelling: psk in any case, then _ or -, and 20 or more key characters, so that a key cut short
 * or run together with other text is caught too; or a run of exactly 43 key characters with
 * both upper- and lower-case letters, as the secret part alone has (a random 43 characters lack
 * either with negligible odds) and a UUID, a hex digest, a trace id or a lower-case slug never
 * has. Longer runs (a long name, a digest) are not a secret alone. The lookarounds make a run
 * start only where the run starts, so a scan is one pass over the text.
 */
const KEY_LIKE = /psk[_-][\w-]{20,}|(?<![\w-])[\w-]{43}(?![\w-])/gi
const REDACTED_KEY = 'psk_[REDACTED]'
// Text without a run this long holds no key: psk_ and 20 key characters is the shortest
// prefixed form matched, a secret alone is 43 characters.
const SHORTEST_PREFIXED_KEY = 24
const SECRET_LENGTH = 43
const PREFIX = /psk/i
// A percent-encoded key character, or a percent sign (a key encoded twice).
const ENCODED_KEY_CHARACTER = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|5[Ff]|25)/g
// Each pass undoes one encoding; a bound, so that %252525… cannot make the scan quadratic.
const DECODE_PASSES = 3

/**
 * The text with anything that looks like an API key replaced: keys never reach the log. A key's
 * characters percent-encoded (%70sk_…, psk%5F…, %41 within the secret) count as the characters;
 * when a key is found the text is written with them decoded.
 */
function withoutKeys (text: string): string {
  // Almost every path and log line ends here or after one scan that finds nothing.
  if (text.length < SHORTEST_PREFIXED_KEY) return text
  const plain = text.includes('%') ? decodeKeyCharacters(text) : text
  if (!hasKeyRun(plain, PREFIX.test(plain) ? SHORTEST_PREFIXED_KEY : SECRET_LENGTH)) return text
  const cleaned = plain.replace(KEY_LIKE, redacted)
  // Nothing redacted (no match, or runs of one case only): the text is logged as it came.
  return cleaned === plain ? text : cleaned
}

/**
 * Whether the text has a run of `shortest` key characters, as every match of KEY_LIKE has: a
 * loop over the characters, cheaper than the expression on the paths and ids that almost every
 * request has, which have no such run (a UUID's is 36 characters).
 */
function hasKeyRun (text: string, shortest: number): boolean {
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const keyCharacter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95
    run = keyCharacter ? run + 1 : 0
    if (run === shortest) return true
  }
  return false
}

const PREFIXED_KEY = /psk[_-][\w-]{20,}/gi

/** A match is a key when it has the prefix or both cases; a run of one case may still hold a prefixed key. */
function redacted (match: string): string {
  if (/^psk[_-]/i.test(match) || (/[A-Z]/.test(match) && /[a-z]/.test(match))) return REDACTED_KEY
  return match.replace(PREFIXED_KEY, REDACTED_KEY)
}

function decodeKeyCharacters (text: string): string {
  let plain = text
  for (let pass = 0; pass < DECODE_PASSES && plain.includes('%'); pass++) {
    const next = plain.replace(ENCODED_KEY_CHARACTER, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)))
    if (next === plain) break
    plain = next
  }
  return plain
}

/**
 * A caller's X-Request-Id is kept when it is a token of at most 128 characters that could not
 * hold a key (KEPT_REQUEST_ID), so traces join across services; any other id is replaced by a
 * fresh one, as the id is logged and echoed: a key or its secret pasted into the wrong header,
 * however wrapped, never is. Checked once, here: the request line writes the id as it is, as
 * nothing in a kept id needs escaping in JSON.
 */
export function requestIdOf (request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && given.length <= LONGEST_REQUEST_ID && KEPT_REQUEST_ID.test(given) ? given : randomUUID()
}

export function loggerOptions (config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    // Belt and braces: no code path logs request headers, and if one ever does, they are masked.
    // Fixed paths only: wildcard paths cost a scan of every log line.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' }
  }
}

// A log line is written within this many milliseconds, or as soon as 4 KiB are waiting.
const LOG_FLUSH_MS = 100
const LOG_BATCH_CHARS = 4096

/**
 * Standard output, written in batches: one write per line would cost a system call per
 * request, a large part of what a small reply costs. Lines wait at most LOG_FLUSH_MS, and
 * whatever is waiting is written when the process exits, also on a fatal error. Only an end
 * without Node's exit event can lose the last LOG_FLUSH_MS of lines: SIGKILL, an abort, or a
 * signal the service does not handle (it handles SIGTERM and SIGINT).
 */
export function batchedStdout (): LogDestination & { flushSync(): void } {
  // Handed whole batches as bytes: in its default text mode sonic-boom measures each batch's
  // byte length, encodes it to write it, and encodes it once more after the write.
  // (Its types describe the text mode only.)
  const file = pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as LineFile
  const lines = new BatchedLines(file, LOG_BATCH_CHARS, LOG_FLUSH_MS)
  process.once('exit', () => lines.flushSync())
  return lines
}

/** Where log lines go: a stream, or anything with pino's write(line). */
export type LogDestination = Pick<NodeJS.WritableStream, 'write'>

/**
 * pino's lines on their way to the destination, with anything that looks like a key replaced:
 * a message or field can quote the request (a header value, a query parameter). The request
 * lines (requestLine) hold only fields cleaned where they are made, and skip this scan.
 */
export function keysRedacted (destination: LogDestination): { write(line: string): void } {
  return { write: (line) => { destination.write(withoutKeys(line)) } }
}

/** What BatchedLines writes to: sonic-boom (pino.destination) in buffer mode, or a stand-in in tests. */
interface LineFile { write(data: Buffer): boolean, flushSync(): void }

/**
 * Lines joined into one string until `batchChars` wait, then handed to the file on in one
 * write, encoded once. In front of sonic-boom, whose own batching (its minLength) measures the
 * byte length of everything waiting on every line it is given (Buffer.byteLength over up to
 * 4 KiB per log line); here a line costs a string append, and sonic-boom (EAGAIN, partial
 * writes) does each actual write, synchronously. Its asynchronous mode hands each batch to
 * libuv's thread pool, where at an exit a batch can still wait behind other work (SQLite's
 * syncs) while the exit writes the lines after it: they would go out of order, or be lost.
 */
export class BatchedLines implements LogDestination {
  readonly #file: LineFile
  readonly #batchChars: number
  #waiting = ''

  constructor (file: LineFile, batchChars: number, flushMs: number) {
    this.#file = file
    this.#batchChars = batchChars
    setInterval(() => this.#hand(), flushMs).unref()
  }

  write (line: string): boolean {
    this.#waiting += line
    if (this.#waiting.length >= this.#batchChars) this.#hand()
    return true
  }

  flushSync (): void {
    this.#hand()
    this.#file.flushSync()
  }

  #hand (): void {
    if (this.#waiting === '') return
    const batch = this.#waiting
    this.#waiting = ''
    this.#file.write(Buffer.from(batch))
  }
}

/**
 * Fastify gives every request a logger of its own, bound to the request id: a pino child,
 * whose bindings are serialized as it is made. Most requests never use it (their one line is
 * written by requestLogging, with the id as a field), so it is made when first used
 * (docs/performance.md).
 */
export function lazyRequestLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger
}

type LogArgs = Parameters<FastifyBaseLogger['info']>

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #logger: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get #real (): FastifyBaseLogger {
    return (this.#logger ??= this.#parent.child(this.#bindings, this.#options))
  }

  get level (): string { return this.#logger?.level ?? this.#parent.level }
  set level (level: string) { this.#real.level = level }
  fatal (...args: LogArgs) { this.#real.fatal(...args) }
  error (...args: LogArgs) { this.#real.error(...args) }
  warn (...args: LogArgs) { this.#real.warn(...args) }
  info (...args: LogArgs) { this.#real.info(...args) }
  debug (...args: LogArgs) { this.#real.debug(...args) }
  trace (...args: LogArgs) { this.#real.trace(...args) }
  silent (...args: LogArgs) { this.#real.silent(...args) }
  child (bindings: Bindings, options?: ChildLoggerOptions) { return this.#real.child(bindings, options) }
}

// pino's own fields on every line (its default base): the request line carries them too.
const LINE_HEAD = '{"level":30,"time":'
const LINE_BASE = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`

/**
 * One line per request: id, method, route template, status, duration, key id, and trace_id and
 * span_id when the request is traced. Never the key.
 * The line has a fixed shape, so it is built as a string, the same line pino writes for
 * log.info({ reqId, ... }, 'request'), without pino's generic serializer and redaction pass,
 * which every request would otherwise pay for; every other line goes through pino. Both go to
 * the same destination, so their order is kept.
 */
export const requestLogging = fp(async function requestLogging (app: FastifyInstance, { destination, traceFields }: RequestLoggingOptions) {
  // Hooks in callback form here and in the other per-request plugins: no promise per hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  // The app's logger is pino's (app.ts gives Fastify pino's options).
  const log = app.log as unknown as Logger
  app.addHook('onResponse', (request, reply, done) => {
    if (log.isLevelEnabled('info')) destination.write(requestLine(request, reply.statusCode, reply.elapsedTime, traceFields))
    done()
  })
}, { name: 'request-logging' })

export interface RequestLoggingOptions {
  /** pino's own destination: both write to it, so the lines keep their order. */
  destination: LogDestination
  traceFields?: TraceFields
}

/** The trace_id and span_id fields of a request's line, ready to insert; '' when it has no recorded span. */
export type TraceFields = (request: FastifyRequest) => string

export function requestLine (request: FastifyRequest, status: number, elapsedMs: number, traceFields?: TraceFields): string {
  const route = request.routeOptions.url
  const keyId = request.apiKeyId
  // The path goes without its query, so a secret put in a query string stays out of logs, and
  // without anything that looks like a key.
  return LINE_HEAD + Date.now() + LINE_BASE +
    // Nothing in the id or the method to escape: requestIdOf keeps only ids of A-Z a-z 0-9 . _ : -
    // (else a UUID), and a method is a token of Node's parser.
    ',"reqId":"' + request.id + '","method":"' + request.method + '"' +
    ',"route":' + (route === undefined ? 'null' : routeJson(route)) +
    ',"path":' + jsonString(pathOf(request.url)) +
    ',"status":' + status +
    ',"durationMs":' + Math.round(elapsedMs * 100) / 100 +
    ',"keyId":' + (keyId === undefined ? 'null' : keyId) +
    (traceFields === undefined ? '' : traceFields(request)) +
    ',"msg":"request"}\n'
}

// Printable ASCII but the quote and the backslash: nothing in it that JSON escapes.
const NOTHING_TO_ESCAPE = /^[ !#-[\]-~]*$/

/**
 * The JSON string of a path: quoted as it is when it holds nothing to escape, as almost every
 * path does. JSON.stringify on each would be a large part of the line's cost.
 */
function jsonString (text: string): string {
  return NOTHING_TO_ESCAPE.test(text) ? '"' + text + '"' : JSON.stringify(text)
}

// Route templates are the app's own and few: each is written as JSON once.
const routeJsons = new Map<string, string>()
function routeJson (route: string): string {
  let json = routeJsons.get(route)
  if (json === undefined) {
    json = JSON.stringify(route)
    routeJsons.set(route, json)
  }
  return json
}

/** A request's URL without its query. */
export function pathOf (url: string): string {
  const query = url.indexOf('?')
  return withoutKeys(query === -1 ? url : url.slice(0, query))
}
