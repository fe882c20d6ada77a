import net from 'node:net'
import pg from 'pg'

// PostgreSQL's SSLRequest: the length 8, then the code 80877103. The server replies with one
// byte: 'S' (it offers TLS) or 'N' (it has none, ssl = off).
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
const OFFERED = 'S'.charCodeAt(0)
const NOT_OFFERED = 'N'.charCodeAt(0)

/** Where a host's URL connects, as pg reads it: `?host=` and `?port=` win, a host starting with / is a socket directory. */
function addressOf (connectionString: string): { key: string, connect: net.NetConnectOpts } {
  const url = new URL(connectionString)
  const port = Number(url.searchParams.get('port') ?? (url.port || 5432))
  const host = url.searchParams.get('host') ?? (decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, '$1') || 'localhost')
  const key = `${host}:${port}`
  return host.startsWith('/') ? { key, connect: { path: `${host}/.s.PGSQL.${port}` } } : { key, connect: { host, port } }
}

/** The same URL without TLS. */
function plainTextOf (connectionString: string): string {
  const url = new URL(connectionString)
  url.searchParams.delete('uselibpqcompat')
  url.searchParams.set('sslmode', 'disable')
  return url.toString()
}

/**
 * Asks a server whether it offers TLS, as the first message of a connection of its own: sends
 * the SSLRequest, reads the one-byte reply and closes the socket. Fails as a connection would
 * when the server cannot be reached, or does not reply within timeoutMs.
 */
function askTls (connect: net.NetConnectOpts, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(connect)
    const settle = (error: Error | undefined, offered = false) => {
      socket.destroy()
      if (error) reject(error)
      else resolve(offered)
    }
    socket.setTimeout(timeoutMs, () => settle(new Error('timeout expired')))
    socket.once('connect', () => socket.write(SSL_REQUEST))
    socket.once('data', (reply: Buffer) => {
      if (reply[0] === OFFERED || reply[0] === NOT_OFFERED) settle(undefined, reply[0] === OFFERED)
      else settle(new Error('The server replied to the request for TLS with neither yes nor no'))
    })
    socket.once('error', settle)
    socket.once('close', () => settle(new Error('Connection terminated unexpectedly')))
  })
}

interface Answer {
  offered?: boolean
  /** Asked again before the next connection: none yet, or a connection to the host failed since. */
  stale: boolean
  asking?: Promise<void>
}

/**
 * For sslmode=prefer, whether each host offers TLS, per host:port: asked once, and again after a
 * connection to the host failed (its TLS setting may have changed, or it was down).
 */
export class TlsAnswers {
  readonly #answers = new Map<string, Answer>()

  #answerOf (connectionString: string): { answer: Answer, connect: net.NetConnectOpts } {
    const { key, connect } = addressOf(connectionString)
    let answer = this.#answers.get(key)
    if (!answer) this.#answers.set(key, (answer = { stale: true }))
    return { answer, connect }
  }

  /** The last reply of the host: undefined until it gave one. */
  offered (connectionString: string): boolean | undefined {
    return this.#answerOf(connectionString).answer.offered
  }

  /** Asks the host unless its reply is known and no connection to it failed since; undefined then. */
  ask (connectionString: string, timeoutMs: number): Promise<void> | undefined {
    const { answer, connect } = this.#answerOf(connectionString)
    if (!answer.stale) return undefined
    answer.asking ??= askTls(connect, timeoutMs).then((offered) => {
      answer.offered = offered
      answer.stale = false
    }).finally(() => { answer.asking = undefined })
    return answer.asking
  }

  /** A connection to the host failed: ask again before the next one. */
  forget (connectionString: string): void {
    this.#answerOf(connectionString).answer.stale = true
  }
}

type ConnectCallback = ((err: Error) => void) | ((err: null, client: pg.Client) => void)

/**
 * A client for sslmode=prefer: TLS without checking the certificate (pg reads prefer so with
 * uselibpqcompat=true, see url.ts) unless its host replied that it has none; plain text then.
 * Whoever connects asks the host first (see askTlsOfNextHost); a client whose host never replied
 * tries TLS. A failed connection, or one that breaks, has its host asked again.
 */
export class TlsIfOfferedClient extends pg.Client {
  readonly #answers: TlsAnswers
  readonly #url: string | undefined

  constructor (config?: pg.ClientConfig, answers = new TlsAnswers()) {
    const url = config?.connectionString
    super({ ...config, connectionString: url !== undefined && answers.offered(url) === false ? plainTextOf(url) : url })
    this.#answers = answers
    this.#url = url
    this.on('error', () => this.#forget())
  }

  #forget (): void {
    if (this.#url !== undefined) this.#answers.forget(this.#url)
  }

  override connect (): Promise<pg.Client>
  override connect (callback: ConnectCallback): void
  override connect (callback?: ConnectCallback): Promise<pg.Client> | void {
    const connected = super.connect().then(() => this, (error: unknown) => {
      this.#forget()
      throw error
    })
    if (!callback) return connected
    const done = callback as (err: Error | null, client?: pg.Client) => void
    connected.then((client) => done(null, client), done)
  }
}

/** TlsIfOfferedClient on the replies of answers, for pg.Pool's Client option. */
export function tlsIfOfferedClass (answers: TlsAnswers): typeof pg.Client {
  return class extends TlsIfOfferedClient {
    constructor (config?: pg.ClientConfig) {
      super(config, answers)
    }
  }
}
