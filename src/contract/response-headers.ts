/**
 * The response headers of the three operations, for the OpenAPI document. Each string is
 * bounded and shaped (maxLength and pattern), so that clients and linters know what to expect.
 */

/** The headers a browser lets a page on another origin read (Access-Control-Expose-Headers): all that the API promises. */
export const CORS_EXPOSED_HEADERS = [
  'Location', 'Link', 'ETag', 'Deprecation', 'Sunset', 'Retry-After', 'RateLimit', 'RateLimit-Policy',
  'Idempotent-Replayed', 'WWW-Authenticate', 'X-Request-Id'
]

const rateLimitPolicies = '(default|failed-auth)'

export const rateLimitHeaders = {
  'RateLimit-Policy': {
    type: 'string',
    maxLength: 100,
    pattern: `^"${rateLimitPolicies}";q=\\d+;w=\\d+$`,
    description: 'The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off.'
  },
  RateLimit: {
    type: 'string',
    maxLength: 100,
    pattern: `^"${rateLimitPolicies}";r=\\d+;t=\\d+$`,
    description: 'What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached.'
  }
}

export const corsHeaders = {
  'Access-Control-Allow-Origin': {
    type: 'string',
    enum: ['*'],
    description: `Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with \`Access-Control-Expose-Headers\`, when the request carries \`Origin\`, so every response carries \`Vary: Origin\`. Readable headers: ${CORS_EXPOSED_HEADERS.join(', ')}.`
  }
}

export const retryAfter = {
  'Retry-After': {
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 86400,
    description: 'Seconds to wait before retrying.'
  }
}

export const wwwAuthenticate = {
  'WWW-Authenticate': {
    type: 'string',
    enum: ['Bearer realm="petstore"', 'Bearer realm="petstore", error="invalid_token"'],
    description: 'RFC 6750: `error="invalid_token"` when a bearer token was sent.'
  }
}

export const location = {
  Location: { type: 'string', format: 'uri-reference', maxLength: 2048, description: 'Address of the new animal: absolute, or `/v1/pets/{id}` when the request named no usable host.' }
}

export const idempotentReplayed = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this response repeats the one given to an earlier request with the same `Idempotency-Key`; nothing new was created.'
  }
}

export const nextLink = {
  Link: {
    type: 'string',
    maxLength: 2048,
    pattern: '^<[^>]+>; rel="next"$',
    description: 'RFC 8288 `<…/pets?limit=…&status=…&cursor=…>; rel="next"` when more pets follow. Absent on the last page.'
  }
}

/**
 * Where the deprecation notice of getPet lands on the docs page (the Link rel="deprecation"
 * target): the id of getPet's section, `tag/animals/GET/pets/{petId}`, with its braces
 * percent-encoded, as RFC 3986 allows no braces in a URI. The page decodes the fragment
 * before it looks the section up, so the encoded form lands on it.
 */
export const GET_PET_DOCS_FRAGMENT = 'tag/animals/GET/pets/%7BpetId%7D'

export function deprecationHeaders (sunset: Date) {
  return {
    Deprecation: { type: 'string', maxLength: 21, pattern: '^@-?\\d+$', description: 'RFC 9745: `@<unix seconds>`, when getPet was deprecated.' },
    Sunset: {
      type: 'string',
      maxLength: 29,
      pattern: '^[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$',
      description: `RFC 8594: \`${sunset.toUTCString()}\`, when getPet is removed.`
    },
    Link: {
      type: 'string',
      maxLength: 2048,
      pattern: '^<[^>{}]+>; rel="successor-version", <[^>{}]+>; rel="deprecation"; type="text/html"$',
      description: 'The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet\'s section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires).'
    }
  }
}

/** The validator of a listing's page or a found animal, and how long a client may keep it. */
export function validatorHeaders (cacheControl: string) {
  return {
    ETag: {
      type: 'string',
      maxLength: 24,
      pattern: '^"[A-Za-z0-9_-]{22}"$',
      description: 'A strong entity tag (RFC 9110) of the body: the same for the same body on every instance. Send it back in `If-None-Match` to get `304` while nothing changed.'
    },
    'Cache-Control': { type: 'string', maxLength: 100, pattern: '^private, (?:max-age=\\d+, immutable|no-cache)$', description: cacheControl }
  }
}
