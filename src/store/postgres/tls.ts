import type { Duplex } from 'node:stream'
import pg from 'pg'

// PostgreSQL's one-byte answer to a request for TLS when it has none (ssl = off).
const NO_TLS = 'N'.charCodeAt(0)

// What of pg's Connection is used here; its typings leave these out.
interface ConnectionInternals {
  ssl: unknown
  sslNegotiation: string
  stream: Duplex
  connect (port: number, host: string): void
  attachListeners (stream: Duplex): void
}

/**
 * libpq's sslmode=prefer on one pg connection. pg asks the server for TLS and reads the one-byte
 * answer itself: 'S', and TLS starts; 'N' (the server has no TLS), and pg closes the connection
 * with "The server does not support SSL connections". Here the answer is read first: after 'N'
 * the connection goes on in plain text on the same socket, as libpq's does; any other answer is
 * pg's to handle. pg's listener for the answer is the only 'data' listener on the socket at that
 * point (with sslnegotiation=direct there is none: TLS starts at once, and nothing is changed).
 */
function plainWhenNoTls (connection: pg.Connection): void {
  const internals = connection as unknown as ConnectionInternals
  const connect = internals.connect.bind(connection)
  internals.connect = (port, host) => {
    connect(port, host)
    const { stream } = internals
    const listeners = stream.rawListeners('data')
    if (!internals.ssl || internals.sslNegotiation === 'direct' || listeners.length !== 1) return
    const readAnswer = listeners[0] as (answer: Buffer) => void
    stream.removeListener('data', readAnswer)
    stream.once('data', (answer: Buffer) => {
      if (answer.length !== 1 || answer[0] !== NO_TLS) return readAnswer(answer)
      internals.attachListeners(stream)
      // What pg's client waits for to send its startup message, TLS or not.
      connection.emit('sslconnect')
    })
  }
}

/**
 * The client for sslmode=prefer: TLS when the server offers it, without checking the certificate
 * (pg reads prefer so with uselibpqcompat=true, see url.ts), plain text when it has none.
 */
export class TlsIfOfferedClient extends pg.Client {
  constructor (config?: pg.ClientConfig) {
    super(config)
    plainWhenNoTls(this.connection)
  }
}
