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
         * @description Deprecated: to be removed on 2030-12-05; use `GET /pets` with the `status` filter instead. Every answer carries `Deprecation`, `Sunset` and `Link`. From the sunset instant on, the answer is 410 `gone`.
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
         * @enum {unknown}
         */
        PetStatus: "available" | "pending" | "sold";
        /** @description An animal to add. When `status` is omitted the pet has no status. Fields not listed here are ignored and never stored. */
        NewPet: {
            /**
             * @description The animal's name: 1 to 200 characters, not only whitespace, no control characters. Stored exactly as sent.
             * @example Rex
             */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly.
             * @example 7
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description An animal record. `status` is absent when the pet has none. */
        Pet: {
            /**
             * Format: int64
             * @description Unique identifier assigned by the service on creation.
             * @example 1
             */
            id: bigint;
            /**
             * @description The animal's name: 1 to 200 characters, not only whitespace, no control characters. Stored exactly as sent.
             * @example Rex
             */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly.
             * @example 7
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description A list of animals. */
        Pets: components["schemas"]["Pet"][];
        Error: {
            /**
             * @description Machine-readable error code; fixed per HTTP status.
             * @enum {unknown}
             */
            code: "invalid_request" | "unauthorized" | "not_found" | "method_not_allowed" | "request_in_progress" | "gone" | "payload_too_large" | "unsupported_media_type" | "idempotency_conflict" | "rate_limited" | "internal" | "unavailable";
            /** @description Human-readable description. */
            message: string;
            /** @description The HTTP status code of the response. */
            status: number;
            /** @description The offending fields, when the error is about the request. */
            details?: {
                /** @description Where the problem is, e.g. `body.name` or `query.limit`. */
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
                status?: "available" | "pending" | "sold";
                /** @description Opaque position from a `Link: rel="next"` header. Follow the link rather than building it. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description RFC 8288 `<…/pets?limit=…&status=…&cursor=…>; rel="next"` when more pets follow. Absent on the last page. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pets"];
                };
            };
            /** @description `limit`, `status` or `cursor` is invalid (added by this service). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid API key. */
            401: {
                headers: {
                    /** @description Bearer realm="petstore", with error="invalid_token" when a bearer token was sent (RFC 6750). */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request failed on the server; the message carries the request id. Never a stack trace. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts (`unavailable`); retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: string;
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
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description Animal added; the body carries the assigned `id`. */
            201: {
                headers: {
                    /** @description Address of the new animal. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description The body lacks required fields, holds invalid values or is not valid JSON. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid API key. */
            401: {
                headers: {
                    /** @description Bearer realm="petstore", with error="invalid_token" when a bearer token was sent (RFC 6750). */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is larger than 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request failed on the server; the message carries the request id. Never a stack trace. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts (`unavailable`); retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: string;
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
            header?: never;
            path: {
                /** @description Identifier of the animal to retrieve. */
                petId: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Animal found. */
            200: {
                headers: {
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `petId` is not a signed 64-bit integer (added by this service). */
            400: {
                headers: {
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`). */
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
                    /** @description Bearer realm="petstore", with error="invalid_token" when a bearer token was sent (RFC 6750). */
                    "WWW-Authenticate"?: string;
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`). */
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
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`). */
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
                    /** @description RFC 9745: `@<unix seconds>`, when getPet was deprecated. */
                    Deprecation?: string;
                    /** @description RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`, when getPet is removed. */
                    Sunset?: string;
                    /** @description The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`). */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store could not be reached within the configured timeouts (`unavailable`); retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
