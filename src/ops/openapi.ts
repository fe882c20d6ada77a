import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'

/**
 * The OpenAPI document, as committed: written from the routes' own schemas by `npm run openapi`
 * (ops/openapi-generator.ts), and a test fails when the file and the routes differ. The
 * client's types are generated from the same file, so callers, the docs page and this route
 * all read the same bytes.
 */
const DOCUMENT_FILE = new URL('../../openapi.json', import.meta.url)

/** The servers entry of the committed document: relative, so it holds on every host. */
export const LOCAL_SERVER = { url: '/v1', description: 'This server (production, staging or local), relative to the document', 'x-internal': false }
const DEPLOYMENT_DESCRIPTION = 'This deployment (production, staging or local, as PUBLIC_URL says)'

/** JSON.rawJSON (Node 22+): JSON.stringify writes the literal as given; a double cannot hold 2^63 - 1. */
export const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON
type Reviver = (this: unknown, key: string, value: unknown) => unknown
const exactNumbers = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && context?.source ? rawJson(context.source) : value

/** The document this instance serves: the committed one, naming PUBLIC_URL as its server when set. */
export function servedDocument (publicUrl: string | undefined): string {
  let text: string
  try {
    text = readFileSync(DOCUMENT_FILE, 'utf8')
  } catch (error) {
    throw new Error(`the OpenAPI document ${DOCUMENT_FILE.pathname} cannot be read (npm run openapi writes it)`, { cause: error })
  }
  if (publicUrl === undefined) return text
  const document = JSON.parse(text, exactNumbers as Reviver) as { servers: object[] }
  document.servers = [{ url: publicUrl, description: DEPLOYMENT_DESCRIPTION, 'x-internal': false }]
  return JSON.stringify(document, null, 2) + '\n'
}

/** Served without auth: the contract is public, the data is not. */
export async function openapiRoute (app: FastifyInstance, options: { publicUrl?: string }) {
  const document = servedDocument(options.publicUrl)
  // Hidden from the document it serves.
  app.get('/openapi.json', { schema: { hide: true } }, (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(document)
  })
}
