import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import negotiate from '@fastify/accept-negotiator'
import { contentHash } from '../http/entity-tags.ts'

type Encoding = 'br' | 'gzip' | 'identity'

/** One form of a reply's body, with the strong ETag (RFC 9110 section 8.8.3) of exactly these bytes. */
export interface Representation { body: Buffer, etag: string, encoding: Encoding }

/** A fixed reply, made once: its body in each encoding worth sending, each with its own ETag. */
export interface StaticReply {
  /** Base64url of the SHA-256 of the plain body: names the content in a versioned address. */
  hash: string
  representations: Partial<Record<Encoding, Representation>>
  /** The encodings it has, best first, as the negotiation offers them. */
  encodings: Encoding[]
}

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json))/
// Below this a compressed body saves less than its headers cost.
const COMPRESS_FROM_BYTES = 1024
// Brotli above quality 5 costs seconds more on the docs script for a few percent; the work runs
// once, in libuv's threads, when the first visitor asks.
const BROTLI_QUALITY = 5
const ENCODINGS: Encoding[] = ['br', 'gzip', 'identity']

function representation (body: Buffer, hash: string, encoding: Encoding): Representation {
  return { body, encoding, etag: encoding === 'identity' ? `"${hash}"` : `"${hash}-${encoding}"` }
}

/** Hashes the body and compresses it, when its type compresses, with Brotli and gzip. */
export async function staticReply (body: Buffer, contentType: string): Promise<StaticReply> {
  const hash = contentHash(body)
  const representations: StaticReply['representations'] = { identity: representation(body, hash, 'identity') }
  if (COMPRESSIBLE.test(contentType) && body.length >= COMPRESS_FROM_BYTES) {
    const [br, gz] = await Promise.all([
      brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      gzipped(body)
    ])
    representations.br = representation(br, hash, 'br')
    representations.gzip = representation(gz, hash, 'gzip')
  }
  return { hash, representations, encodings: ENCODINGS.filter((encoding) => representations[encoding] !== undefined) }
}

/** The smallest form the client accepts (Accept-Encoding); the plain body when it names none. */
export function representationFor (reply: StaticReply, acceptEncoding: string | undefined): Representation {
  const chosen = acceptEncoding ? negotiate(acceptEncoding, reply.encodings) : null
  return reply.representations[chosen ?? 'identity']!
}
