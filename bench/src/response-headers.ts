/**
 * The response headers the service puts on each kind of response the benchmark asks for, so that
 * the baseline can send the same ones (`npm run bench -- --headers`). Then the table can tell
 * what the headers the interface and the service promise cost in Node and Fastify alone (the
 * baseline with them against the bare one) from what the service's own work costs (the service
 * against the baseline with them).
 */

/** "METHOD route status" → header name → value, as the service sent it. */
export type ResponseHeaders = Record<string, Record<string, string>>

/** Fields that Node writes on every response, or that the baseline sets itself from its body (the ETag). */
export const FRAMING = new Set(['content-length', 'content-type', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'etag'])

/** The responses the scenarios get: a listing, a pet, a created pet and a 401 (a request without a key). */
const RESPONSE_KINDS = [
  { kind: 'GET /v1/pets 200', path: '/v1/pets?limit=20', withKey: true },
  { kind: 'GET /v1/pets/:petId 200', path: '/v1/pets/1', withKey: true },
  { kind: 'POST /v1/pets 201', path: '/v1/pets', withKey: true, body: JSON.stringify({ name: 'headers', categoryId: 1, status: 'available' }) },
  { kind: 'GET /v1/pets 401', path: '/v1/pets?limit=20', withKey: false }
]

/** The status a kind names: its last word. */
const statusOf = (kind: string) => Number(kind.slice(kind.lastIndexOf(' ') + 1))

/** Asks the service once for each kind of response (one create included) and keeps its headers. */
export async function responseHeadersOf (url: string, key: string): Promise<ResponseHeaders> {
  const kinds: ResponseHeaders = {}
  for (const { kind, path, withKey, body } of RESPONSE_KINDS) {
    const headers: Record<string, string> = withKey ? { authorization: `Bearer ${key}` } : {}
    if (body) headers['content-type'] = 'application/json'
    const response = await fetch(url + path, { method: body ? 'POST' : 'GET', headers, body })
    await response.arrayBuffer()
    if (response.status !== statusOf(kind)) throw new Error(`${kind}: the service replied ${response.status}`)
    kinds[kind] = Object.fromEntries([...response.headers].filter(([name]) => !FRAMING.has(name)))
  }
  return kinds
}

/** The headers of one route's responses, by status, for the baseline's onSend hook. */
export function headersByStatus (kinds: ResponseHeaders, methodAndRoute: string): Map<number, Record<string, string>> {
  const byStatus = new Map<number, Record<string, string>>()
  for (const [kind, headers] of Object.entries(kinds)) {
    const status = statusOf(kind)
    if (kind === `${methodAndRoute} ${status}`) byStatus.set(status, headers)
  }
  return byStatus
}
