import { createServer, connect, type Socket } from 'node:net'
import { once } from 'node:events'

/**
 * A TCP proxy on 127.0.0.1 that a test puts between the service and a real server, to cut
 * the link without touching the server (others use it). Modes:
 * - forward: pass bytes both ways (the healthy network);
 * - refuse: reset every open connection and each new one at once (the server is down);
 * - blackhole: accept connections and stop passing bytes on all of them, silently (a network
 *   partition: nothing is refused, nothing replies, only timeouts can tell).
 * Leaving refuse or blackhole closes what was open, as a real outage would have. And cut():
 * the link breaks once (both sides of every open connection closed, or reset) while new
 * connections go on being forwarded.
 */
export type ProxyMode = 'forward' | 'refuse' | 'blackhole'

export interface TcpProxy {
  host: string
  port: number
  mode: ProxyMode
  setMode(mode: ProxyMode): void
  /** Closes (or resets) both sides of every open connection and keeps forwarding new ones; returns how many connections it cut. */
  cut(how?: 'close' | 'reset'): number
  close(): Promise<void>
}

export async function startTcpProxy (target: { host: string, port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>()
  const upstreams = new WeakSet<Socket>()
  let mode: ProxyMode = 'forward'

  const server = createServer((client) => {
    open.add(client)
    client.on('close', () => open.delete(client))
    client.on('error', () => {})
    if (mode === 'refuse') return client.resetAndDestroy()
    if (mode === 'blackhole') return client.pause()
    const upstream = connect(target)
    open.add(upstream)
    upstreams.add(upstream)
    upstream.on('close', () => { open.delete(upstream); client.destroy() })
    upstream.on('error', () => {})
    client.on('close', () => upstream.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }

  return {
    host: '127.0.0.1',
    port,
    get mode () { return mode },
    setMode (next: ProxyMode) {
      const previous = mode
      mode = next
      if (next === 'refuse' || previous !== 'forward') {
        for (const socket of open) socket.resetAndDestroy()
      } else if (next === 'blackhole') {
        for (const socket of open) {
          socket.unpipe()
          socket.pause()
        }
      }
    },
    cut (how: 'close' | 'reset' = 'close') {
      const connections = [...open]
      for (const socket of connections) {
        if (how === 'reset') socket.resetAndDestroy()
        else socket.destroy()
      }
      return connections.filter((socket) => !upstreams.has(socket)).length
    },
    async close () {
      for (const socket of open) socket.destroy()
      server.close()
      await once(server, 'close')
    }
  }
}
