import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * The OpenAPI document, as committed: written from the routes' own schemas by `npm run openapi`
 * (ops/openapi-generator.ts), and a test fails when the file and the routes differ. The
 * client's types are generated from the same file, so callers, the docs page and this route
 * all read the same bytes.
 */
const DOCUMENT_FILE = new URL('../../openapi.json', import.meta.url)

/** The base addresses a deployment knows: PUBLIC_URL and STAGING_URL. */
export interface ServerUrls { publicUrl?: string, stagingUrl?: string }

interface Server { url: string, description: string, 'x-internal': boolean, variables?: Record<string, { default: string }> }

/**
 * The document's servers: this server, relative, so that the docs page and any tool that
 * loaded the document call the host that served it; then the interface's two base addresses
 * as server variables, whose defaults are the deployment's PUBLIC_URL and STAGING_URL, or
 * placeholders in the committed document.
 */
export function servers ({ publicUrl, stagingUrl }: ServerUrls = {}): Server[] {
  // No description on the variables: the OpenAPI 3.1 schema validators use spells it `descriptions`.
  return [
    { url: '/v1', description: 'This server (local, staging or production): the deployment that served this document, relative to it', 'x-internal': false },
    { url: '{base_url}', description: 'Production; base_url is the deployment\'s PUBLIC_URL, including /v1', 'x-internal': false, variables: { base_url: { default: publicUrl ?? 'https://petstore.example.com/v1' } } },
    { url: '{staging_url}', description: 'Staging; staging_url is the deployment\'s STAGING_URL, including /v1', 'x-internal': false, variables: { staging_url: { default: stagingUrl ?? 'https://staging.petstore.example.com/v1' } } }
  ]
}

/** JSON.rawJSON (Node 22+): JSON.stringify writes the literal as given; a double cannot hold 2^63 - 1. */
export const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON
type Reviver = (this: unknown, key: string, value: unknown) => unknown
const exactNumbers = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && context?.source ? rawJson(context.source) : value

/** The document this instance serves: the committed one, with PUBLIC_URL and STAGING_URL as its server variables' defaults when set. */
export function servedDocument (urls: ServerUrls): string {
  let text: string
  try {
    text = readFileSync(DOCUMENT_FILE, 'utf8')
  } catch (error) {
    throw new Error(`the OpenAPI document ${DOCUMENT_FILE.pathname} cannot be read (npm run openapi writes it)`, { cause: error })
  }
  if (urls.publicUrl === undefined && urls.stagingUrl === undefined) return text
  const document = JSON.parse(text, exactNumbers as Reviver) as { servers: Server[] }
  document.servers = servers(urls)
  return JSON.stringify(document, null, 2) + '\n'
}

/** Served without auth: the contract is public, the data is not. */
export const openapiRoute = fp(async function openapiRoute (app: FastifyInstance, options: ServerUrls) {
  const document = servedDocument(options)
  // Hidden from the document it serves.
  app.get('/openapi.json', { schema: { hide: true } }, (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(document)
  })
}, { name: 'openapi', dependencies: ['method-not-allowed'], encapsulate: true })
