// Generated from openapi.json by `npm run generate -w @petstore/client`. Do not edit.

export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List all animals
         * @description Returns a page of animals in ascending id order. When more follow, the `Link` header carries `rel="next"`; following it from any page visits every matching animal exactly once. The body stays a plain array.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add an animal
         * @description Adds an animal. `name` and `categoryId` are required; unknown fields are ignored and never stored. `categoryId` is read exactly over the whole int64 range; numeric strings and fractions are rejected.
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an animal (deprecated)
         * @deprecated
         * @description Deprecated: to be removed on 2030-12-05; use `GET /pets` with the `status` filter instead. Every response carries `Deprecation`, `Sunset` and `Link`. From the sunset instant on, the response is 410 `gone`.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description Availability status of the animal.
         * @enum {string}
         */
        PetStatus: "available" | "pending" | "sold";
        /** @description An animal to add. When `status` is omitted the pet has no status. Fields not listed here are ignored and never stored. */
        NewPet: {
            /**
             * @description The animal's name: 1 to 200 characters (Unicode code points), not only whitespace, no control characters (U+0000–U+001F, U+007F–U+009F) and no lone surrogates. Other characters, format characters such as U+200D included, are allowed. Stored exactly as sent.
             * @example Rex
             */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly. JavaScript clients: JSON.parse and generated clients that type this as `number` silently round values beyond 2^53 (9223372036854775807 becomes 9223372036854775808); use a lossless JSON parser or the project's client (@petstore/client), which reads it as a bigint.
             * @example 7
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description An animal record. `status` is absent when the pet has none. */
        Pet: {
            /**
             * Format: int64
             * @description Unique identifier assigned by the service on creation. JavaScript clients: JSON.parse and generated clients that type this as `number` silently round values beyond 2^53 (9223372036854775807 becomes 9223372036854775808); use a lossless JSON parser or the project's client (@petstore/client), which reads it as a bigint.
             * @example 1
             */
            id: bigint;
            /**
             * @description The animal's name: 1 to 200 characters (Unicode code points), not only whitespace, no control characters (U+0000–U+001F, U+007F–U+009F) and no lone surrogates. Other characters, format characters such as U+200D included, are allowed. Stored exactly as sent.
             * @example Rex
             */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly. JavaScript clients: JSON.parse and generated clients that type this as `number` silently round values beyond 2^53 (9223372036854775807 becomes 9223372036854775808); use a lossless JSON parser or the project's client (@petstore/client), which reads it as a bigint.
             * @example 7
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description A list of animals: at most `limit`, which is at most 100. */
        Pets: components["schemas"]["Pet"][];
        Error: {
            /**
             * @description Machine-readable error code; fixed per HTTP status.
             * @enum {string}
             */
            code: "invalid_request" | "unauthorized" | "forbidden" | "not_found" | "method_not_allowed" | "request_timeout" | "request_in_progress" | "gone" | "payload_too_large" | "unsupported_media_type" | "idempotency_conflict" | "rate_limited" | "headers_too_large" | "internal" | "unavailable";
            /** @description Human-readable description. */
            message: string;
            /**
             * Format: int32
             * @description The HTTP status code of the response.
             */
            status: number;
            /** @description The offending fields, when the error is about the request. */
            details?: {
                /** @description Where the problem is, e.g. `body.name`, `query.limit` or `header.idempotency-key`. */
                field: string;
                message: string;
            }[];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description Maximum number of animals returned. */
                limit?: number;
                /** @description Only animals with this status are listed. */
                status?: components["schemas"]["PetStatus"];
                /** @description Opaque position from a `Link: rel="next"` header. Follow the link rather than building it. */
                cursor?: string;
            };
            header?: {
                /** @description RFC 9110 section 13.1.2: entity tags (`ETag`) of replies the client has, comma-separated, or `*`. When one names the current reply (weak comparison), the response is `304` with no body, and is not counted against the API key's rate limit. Errors are never `304`. A value that is not `*` or a list of entity tags is 400 `invalid_request`. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description A strong entity tag (RFC 9110) of the body: the same for the same body on every instance. Send it back in `If-None-Match` to get `304` while nothing changed. */
                    ETag?: string;
                    /** @description A page with a next page never changes: `private, max-age=31536000, immutable`. The last page can still grow: `private, no-cache` (stored by the client, revalidated each time with `If-None-Match`). */
                    "Cache-Control"?: string;
                    /** @description RFC 8288 `<…/pets?limit=…&status=…&cursor=…>; rel="next"` when more pets follow. Absent on the last page. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pets"];
                };
            };
            /** @description Not Modified: `If-None-Match` names the current reply (its `ETag`). No body; the header fields the 200 would carry, so that the client's cache can update what it stored. Not counted against the API key's rate limit. */
            304: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description A strong entity tag (RFC 9110) of the body: the same for the same body on every instance. Send it back in `If-None-Match` to get `304` while nothing changed. */
                    ETag?: string;
                    /** @description A page with a next page never changes: `private, max-age=31536000, immutable`. The last page can still grow: `private, no-cache` (stored by the client, revalidated each time with `If-None-Match`). */
                    "Cache-Control"?: string;
                    /** @description RFC 8288 `<…/pets?limit=…&status=…&cursor=…>; rel="next"` when more pets follow. Absent on the last page. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `limit`, `status` or `cursor` is invalid, or `Authorization` was sent more than once (added by this service). */
            400: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid API key. */
            401: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 6750: `error="invalid_token"` when a bearer token was sent. */
                    "WWW-Authenticate"?: "Bearer realm=\"petstore\"" | "Bearer realm=\"petstore\", error=\"invalid_token\"";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request was not received completely within the request timeout; the connection is closed. */
            408: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests: the API key reached its limit for the current minute, or this client address failed authentication too often. */
            429: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and header fields are larger than the server accepts; the connection is closed. */
            431: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request failed on the server; the message carries the request id. Never a stack trace. */
            500: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds. */
            503: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the create safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, as a quoted string or bare. A repeat with the same key and the same body, by the same API key or a key rotated from it (`keys rotate`), within 24 hours creates nothing and gets the first response again, with `Idempotent-Replayed: true`. The same key with another body is 422. Keys of other API keys are never seen. Make a fresh key for each new animal, such as a new random UUID (`crypto.randomUUID()`), and send it again only to retry that same create. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description Animal added and durably stored: sent only once the commit holding it is on stable storage. The body carries the assigned `id`. A replay of an earlier create carries the same body and `Location`. */
            201: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Address of the new animal: absolute, or `/v1/pets/{id}` when the request named no usable host. */
                    Location?: string;
                    /** @description Present when this response repeats the one given to an earlier request with the same `Idempotency-Key`; nothing new was created. */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description The body lacks required fields, holds invalid values or is not valid JSON, `Idempotency-Key` is malformed, or `Authorization` was sent more than once. */
            400: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid API key. */
            401: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 6750: `error="invalid_token"` when a bearer token was sent. */
                    "WWW-Authenticate"?: "Bearer realm=\"petstore\"" | "Bearer realm=\"petstore\", error=\"invalid_token\"";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The API key is read-only (`forbidden`): adding an animal needs a write key. Checked after the key and before the body, so a read key gets 403 whatever body it sends. */
            403: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request was not received completely within the request timeout; the connection is closed. */
            408: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Another request with the same `Idempotency-Key` is still being processed; retry after `Retry-After` seconds. */
            409: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is larger than 16 KiB. */
            413: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The `Idempotency-Key` was already used, by this API key or another key of its rotation chain, with a different body. */
            422: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests: the API key reached its limit for the current minute, or this client address failed authentication too often. */
            429: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and header fields are larger than the server accepts; the connection is closed. */
            431: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request failed on the server; the message carries the request id. Never a stack trace. */
            500: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds. Also when the store could not confirm the animal was written to stable storage: it may then exist, and a retry with the same `Idempotency-Key` creates it at most once. */
            503: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 section 13.1.2: entity tags (`ETag`) of replies the client has, comma-separated, or `*`. When one names the current reply (weak comparison), the response is `304` with no body, and is not counted against the API key's rate limit. Errors are never `304`. A value that is not `*` or a list of entity tags is 400 `invalid_request`. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Identifier of the animal to retrieve. JavaScript clients: JSON.parse and generated clients that type this as `number` silently round values beyond 2^53 (9223372036854775807 becomes 9223372036854775808); use a lossless JSON parser or the project's client (@petstore/client), which reads it as a bigint. */
                petId: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Animal found. */
            200: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description A strong entity tag (RFC 9110) of the body: the same for the same body on every instance. Send it back in `If-None-Match` to get `304` while nothing changed. */
                    ETag?: string;
                    /** @description `private, max-age=<seconds>, immutable`: a pet never changes, so the client may keep it for a year without asking again, but never past the sunset. */
                    "Cache-Control"?: string;
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description Not Modified: `If-None-Match` names the current reply (its `ETag`). No body; the header fields the 200 would carry, so that the client's cache can update what it stored. Not counted against the API key's rate limit. */
            304: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description A strong entity tag (RFC 9110) of the body: the same for the same body on every instance. Send it back in `If-None-Match` to get `304` while nothing changed. */
                    ETag?: string;
                    /** @description `private, max-age=<seconds>, immutable`: a pet never changes, so the client may keep it for a year without asking again, but never past the sunset. */
                    "Cache-Control"?: string;
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `petId` is not a signed 64-bit integer, or `Authorization` was sent more than once (added by this service). */
            400: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid API key. */
            401: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 6750: `error="invalid_token"` when a bearer token was sent. */
                    "WWW-Authenticate"?: "Bearer realm=\"petstore\"" | "Bearer realm=\"petstore\", error=\"invalid_token\"";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The requested resource could not be found. */
            404: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request was not received completely within the request timeout; the connection is closed. */
            408: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The operation has passed its sunset date and is removed. */
            410: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests: the API key reached its limit for the current minute, or this client address failed authentication too often. */
            429: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and header fields are larger than the server accepts; the connection is closed. */
            431: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request failed on the server; the message carries the request id. Never a stack trace. */
            500: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds. */
            503: {
                headers: {
                    /** @description The rate limit this response was counted against (draft-ietf-httpapi-ratelimit-headers): `"default";q=1000;w=60` per API key, or `"failed-auth";q=60;w=60` per client address for requests without a valid key. Absent when the per-key limit is switched off. */
                    "RateLimit-Policy"?: string;
                    /** @description What is left of that limit: `r` requests for the next `t` seconds. Absent when the counter store cannot be reached. */
                    RateLimit?: string;
                    /** @description Any origin may call the API from a browser; the key is sent in the Authorization header, never in a cookie. Sent, with `Access-Control-Expose-Headers`, when the request carries `Origin`, so every response carries `Vary: Origin`. Readable headers: Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id. */
                    "Access-Control-Allow-Origin"?: "*";
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`: getPet's section of `/docs`, `#tag/animals/GET/pets/%7BpetId%7D`, its braces percent-encoded as RFC 3986 requires). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
