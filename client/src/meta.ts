/** What a response says besides its body: status, whether it revalidated, request id, rate limit, and every header. */
export interface ResponseMeta {
  /** 200; 304 for a read revalidated against the client's cache; 201 for a create (its replay included). */
  status: number
  /** true when the service answered 304 Not Modified and the data is the body the client kept for that ETag. */
  revalidated: boolean
  /** The response's X-Request-Id: quote it when reporting a problem. */
  requestId: string | undefined
  /** The key's rate limit after this request, from RateLimit-Policy and RateLimit; undefined when the response has neither. */
  rateLimit: RateLimit | undefined
  /** All of the response's headers (of the 304, when revalidated): ETag, Location, Idempotent-Replayed, Deprecation, Sunset … */
  headers: Headers
}

/**
 * One rate-limit policy (draft-ietf-httpapi-ratelimit-headers): its quota and window from
 * RateLimit-Policy, what is left of it from RateLimit. A field the response did not carry is undefined.
 */
export interface RateLimit {
  /** The policy's name, e.g. "default". */
  policy: string
  /** q: requests allowed per window. */
  quota: number | undefined
  /** w: the window, in seconds. */
  windowSeconds: number | undefined
  /** r: requests left in the current window. */
  remaining: number | undefined
  /** t: seconds until the window starts again. */
  resetSeconds: number | undefined
}

export function metaOf (response: Response, revalidated = false): ResponseMeta {
  const { headers } = response
  return {
    status: response.status,
    revalidated,
    requestId: headers.get('x-request-id') ?? undefined,
    rateLimit: rateLimitOf(headers.get('ratelimit-policy'), headers.get('ratelimit')),
    headers
  }
}

/**
 * The first policy RateLimit reports on (else the first RateLimit-Policy names), with the
 * parameters both fields give for that name.
 */
export function rateLimitOf (policyField: string | null, stateField: string | null): RateLimit | undefined {
  const policies = listItems(policyField)
  const states = listItems(stateField)
  const name = states[0]?.name ?? policies[0]?.name
  if (name === undefined) return undefined
  const policy = policies.find((item) => item.name === name)?.params
  const state = states.find((item) => item.name === name)?.params
  return { policy: name, quota: policy?.get('q'), windowSeconds: policy?.get('w'), remaining: state?.get('r'), resetSeconds: state?.get('t') }
}

interface Item { name: string, params: Map<string, number> }

// An RFC 9651 List member: a String or Token item, then its parameters. Only integer parameters
// are kept: q, w, r and t are integers; a member that does not parse ends the list.
const MEMBER = /^\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z*][\w:/!#$%&'*+.^`|~-]*))((?:\s*;\s*[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)\s*(?:,|$)/
const PARAM = /;\s*([a-z*][a-z0-9_.*-]*)(?:=("(?:[^"\\]|\\.)*"|[^;,\s]*))?/g
const INTEGER = /^-?\d{1,15}$/

function listItems (field: string | null): Item[] {
  const items: Item[] = []
  let rest = field ?? ''
  while (rest.trim() !== '') {
    const match = MEMBER.exec(rest)
    if (!match) break
    const params = new Map<string, number>()
    for (const [, key, value] of (match[3] ?? '').matchAll(PARAM)) {
      if (value !== undefined && INTEGER.test(value)) params.set(key!, Number(value))
    }
    items.push({ name: match[1]?.replace(/\\(.)/g, '$1') ?? match[2]!, params })
    rest = rest.slice(match[0].length)
  }
  return items
}
