/** What the slots need of a connection (a net.Socket; tests hand in stand-ins). */
export interface SlotSocket {
  readonly remoteAddress?: string | undefined
  once(event: 'close', listener: () => void): unknown
}

/**
 * Where a connection stands, as the slots see it when room must be made:
 * - `silent`: no byte received since it was accepted;
 * - `receiving`: part of its first request's headers are in, no request has begun;
 * - `idle`: its last response is sent and no request is in progress (a keep-alive connection
 *   between requests);
 * - `busy`: a request is in progress (its body arriving, its handler running, or its response
 *   being sent). A busy connection is never taken away: its client would never hear the reply.
 */
export type ConnectionState = 'silent' | 'receiving' | 'idle' | 'busy'

export interface SlotOptions<S extends SlotSocket> {
  /** MAX_CONNECTIONS: connections the process serves. */
  capacity: number
  /** MAX_CONNECTIONS_PER_ADDRESS: an address's share while the process is full; 0 for none. */
  share: number
  /** The key an address is counted under (IPv6 by /64, IPv4-mapped as IPv4). */
  addressOf: (peer: string) => string
  stateOf: (socket: S) => ConnectionState
  /** Ends a connection taken away to make room, in the way its state allows. */
  close: (socket: S, state: Exclude<ConnectionState, 'busy'>) => void
}

/**
 * How long a new connection has to send its first byte before, silent, it may be taken: a
 * client sends its request as soon as it has connected, and a connection taken before its
 * request is read would leave that client with no reply.
 */
export const SILENT_AFTER_MS = 1000

/**
 * After a search for a connection to take found none, new connections are refused without
 * searching again for this long: while every connection is busy, a flood of new ones would
 * otherwise cost a scan of every connection each.
 */
export const SEARCH_AGAIN_AFTER_MS = 10

/**
 * Who holds the process's MAX_CONNECTIONS slots. While there is room every connection gets one,
 * whatever its address holds: a client's burst of hundreds of connections, or an office behind
 * one address, is served as long as the process has room. Only when the process is full does a
 * newcomer take a slot from a connection that is not busy, in this order:
 *
 * 1. a silent one (no byte in the SILENT_AFTER_MS since it came) of an address holding more
 *    connections than the newcomer's address, the heaviest first;
 * 2. one whose first request's headers are still arriving (it is told 503), the heaviest
 *    address's first;
 * 3. one idle between requests (a keep-alive connection), the heaviest address's first.
 *
 * An address holding its share (MAX_CONNECTIONS_PER_ADDRESS) or more takes only from its own
 * connections, and never its own silent ones. When nothing can be taken the newcomer is refused
 * (`admit` returns false): the caller answers the request it sends with 503, so that a client
 * always hears why. Busy connections are never taken: their clients would never hear the reply.
 *
 * So silent and slow connections never keep another address out, and an attacker's reconnects
 * cannot take each other's silent connections in a loop: addresses holding as many as each
 * other, or one address over its share, leave silent connections to lighter newcomers.
 * (nginx's `limit_conn` and haproxy's `conn_cur` limit connections per address at all times;
 * here the share applies under pressure only.)
 */
export class ConnectionSlots<S extends SlotSocket> {
  readonly #options: SlotOptions<S>
  /** Each address's connections, with when each came (performance.now()), oldest first. */
  readonly #byAddress = new Map<string, Map<S, number>>()
  #held = 0
  #searchAgainAt = -Infinity

  constructor (options: SlotOptions<S>) {
    this.#options = options
  }

  /** Connections holding a slot. */
  get held (): number {
    return this.#held
  }

  /**
   * Gives the connection a slot, taking one from another connection when the process is full.
   * False when none could be taken: the connection holds no slot and should be refused. A
   * connection refused at first may ask again (its request came, and a slot may have freed).
   */
  admit (socket: S, now = performance.now()): boolean {
    const peer = socket.remoteAddress
    // Already gone (reset while being accepted): there is nothing to serve.
    if (peer === undefined) return true
    const address = this.#options.addressOf(peer)
    if (this.#held >= this.#options.capacity) {
      if (now < this.#searchAgainAt) return false
      if (!this.#makeRoomFor(address, now)) {
        this.#searchAgainAt = now + SEARCH_AGAIN_AFTER_MS
        return false
      }
    }
    let held = this.#byAddress.get(address)
    if (held === undefined) this.#byAddress.set(address, held = new Map())
    held.set(socket, now)
    this.#held++
    socket.once('close', () => this.#release(address, socket))
    return true
  }

  #release (address: string, socket: S) {
    const held = this.#byAddress.get(address)
    if (held === undefined || !held.delete(socket)) return
    this.#held--
    if (held.size === 0) this.#byAddress.delete(address)
  }

  /** Takes a slot for `address`; false when no connection it may take is found. */
  #makeRoomFor (address: string, now: number): boolean {
    const own = this.#byAddress.get(address)
    const ownCount = own?.size ?? 0
    const { share } = this.#options
    const overShare = share > 0 && ownCount >= share
    const heaviestFirst = overShare ? (own ? [[address, own] as const] : []) : [...this.#byAddress].sort(([, a], [, b]) => b.size - a.size)
    if (!overShare) {
      const heavier = heaviestFirst.filter(([holder, held]) => holder !== address && held.size > ownCount)
      if (this.#takeOne(heavier, (socket, since) => now - since >= SILENT_AFTER_MS && this.#options.stateOf(socket) === 'silent')) return true
    }
    return this.#takeOne(heaviestFirst, (socket) => this.#options.stateOf(socket) === 'receiving') ||
      this.#takeOne(heaviestFirst, (socket) => this.#options.stateOf(socket) === 'idle')
  }

  /** Closes the first connection `takes` picks, the holders in the order given, each's oldest first. */
  #takeOne (holders: ReadonlyArray<readonly [string, Map<S, number>]>, takes: (socket: S, since: number) => boolean): boolean {
    for (const [holder, held] of holders) {
      for (const [socket, since] of held) {
        if (!takes(socket, since)) continue
        const state = this.#options.stateOf(socket) as Exclude<ConnectionState, 'busy'>
        this.#release(holder, socket)
        this.#options.close(socket, state)
        return true
      }
    }
    return false
  }
}
