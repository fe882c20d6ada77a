import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { ValidateFunction } from 'ajv'

/**
 * Checks an HTTP response against an OpenAPI 3.1 document: the status must be documented for the
 * operation (for HEAD, the GET operation's) and the body must match its schema (a HEAD response
 * must have none). Responses for paths or methods the document does not have (404, 405) must
 * still be the Error body.
 */

interface Operation { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  servers?: Array<{ url: string }>
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

export interface ValidationTarget { method: string, url: string, status: number, contentType?: string, body: string }

export function createResponseValidator (document: OpenApiDocument, basePath = '/v1') {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema(document as object, 'openapi')
  const compiled = new Map<string, ValidateFunction>()
  const schemaAt = (pointer: string) => {
    let validate = compiled.get(pointer)
    if (!validate) compiled.set(pointer, (validate = ajv.compile({ $ref: `openapi#${pointer}` })))
    return validate
  }
  const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1')
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$')
  }))

  /** The response key the document has for this status ('default' as the fallback), or undefined. */
  const documentedKey = (operation: Operation, status: number) =>
    String(status) in operation.responses ? String(status) : 'default' in operation.responses ? 'default' : undefined

  return function validateResponse ({ method, url, status, contentType, body }: ValidationTarget): string[] {
    const path = url.split('?')[0]!
    const relative = path.startsWith(basePath + '/') ? path.slice(basePath.length) : undefined
    const template = relative === undefined ? undefined : templates.find((t) => t.pattern.test(relative))?.template
    // HEAD is GET without the body: its status must be one the GET operation documents.
    const isHead = method.toUpperCase() === 'HEAD'
    const verb = isHead ? 'get' : method.toLowerCase()
    const operation = template ? document.paths[template]?.[verb] : undefined
    const key = operation && documentedKey(operation, status)
    if (operation && !key) return [`${method} ${template} has no documented ${status} response`]
    if (!operation && status < 400) return [`${method} ${path} → ${status}: not an operation of the document`]
    if (isHead) return body === '' ? [] : [`${method} ${path} → ${status}: HEAD response has a body`]
    // A response the document gives no content (a 304) must have none.
    if (key && operation.responses[key]?.content === undefined) {
      return body === '' && contentType === undefined ? [] : [`${method} ${path} → ${status}: the document gives this response no body`]
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return [`${method} ${path} → ${status}: body is not JSON`]
    }
    if (!contentType?.startsWith('application/json')) return [`${method} ${path} → ${status}: content-type ${contentType ?? 'missing'}`]
    const pointer = key
      ? `/paths/${escape(template!)}/${verb}/responses/${key}/content/application~1json/schema`
      : '/components/schemas/Error'
    const validate = schemaAt(pointer)
    if (validate(parsed)) {
      if (status >= 400 && (parsed as { status?: unknown }).status !== status) return [`Error body status ${(parsed as { status?: unknown }).status} ≠ HTTP ${status}`]
      return []
    }
    return (validate.errors ?? []).map((e) => `${method} ${path} → ${status}: ${e.instancePath || 'body'} ${e.message ?? ''}`)
  }
}
