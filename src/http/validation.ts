import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { ApiError, type ErrorDetail } from './errors.ts'
import { parseInt64 } from '../contract/int64.ts'
import { numberSource } from './json-body.ts'
import { sharedSchemas } from '../contract/schemas.ts'

/**
 * Request validation, stricter than Fastify's default in two ways:
 * bodies are never coerced ({"categoryId": "7"} is a 400), and int64 values are read exactly
 * (from the source text of the body, from the raw text of the query and path).
 */

interface JsonSchema {
  type?: string
  format?: string
  enum?: readonly string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  default?: unknown
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

export function createBodyAjv (): Ajv {
  // validateSchema off, as for the config: the schemas are fixed and test/schemas.test.ts checks them.
  const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: true, strict: false, validateSchema: false })
  addFormats(ajv)
  for (const schema of sharedSchemas) ajv.addSchema(schema)
  return ajv
}

function fieldOf (part: string, error: ErrorObject): string {
  const path = error.instancePath.split('/').slice(1).join('.')
  const missing = error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : ''
  return [part, path, missing].filter(Boolean).join('.')
}

function describe (error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required'
  if (error.keyword === 'pattern') return 'must not be blank and must not contain control characters'
  if (error.keyword === 'enum') return `must be one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`
  return error.message ?? 'is invalid'
}

function rejection (details: ErrorDetail[]): { error: ApiError } {
  const summary = details.map((d) => `${d.field} ${d.message}`).join('; ')
  return { error: new ApiError('invalid_request', `Invalid request: ${summary}.`, { details }) }
}

function compileBody (ajv: Ajv, schema: JsonSchema & { $ref?: string }) {
  const validate: ValidateFunction = ajv.compile(schema)
  const resolved = (schema.$ref ? ajv.getSchema(schema.$ref)?.schema : schema) as JsonSchema
  const properties = Object.entries(resolved.properties ?? {})
  return (data: unknown) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      return rejection([{ field: 'body', message: 'must be a JSON object' }])
    }
    if (!validate(data)) {
      // One line per field: ajv reports each failed keyword, the first one says enough.
      const seen = new Map<string, ErrorDetail>()
      for (const error of validate.errors ?? []) {
        const field = fieldOf('body', error)
        if (!seen.has(field)) seen.set(field, { field, message: describe(error) })
      }
      return rejection([...seen.values()])
    }
    // Only the declared fields go on: unknown fields are ignored, so they are never stored.
    const value: Record<string, unknown> = {}
    for (const [key, property] of properties) {
      const given = (data as Record<string, unknown>)[key]
      if (given === undefined) continue
      if (property.format === 'int64') {
        const exact = parseInt64(numberSource(data, key) ?? '')
        if (exact === undefined) {
          return rejection([{ field: `body.${key}`, message: 'must be a signed 64-bit integer written without a fraction or exponent' }])
        }
        value[key] = exact
      } else {
        value[key] = given
      }
    }
    return { value }
  }
}

const patterns = new Map<string, RegExp>()
function patternOf (source: string): RegExp {
  let pattern = patterns.get(source)
  if (!pattern) patterns.set(source, (pattern = new RegExp(source, 'u')))
  return pattern
}

function parseTextValue (schema: JsonSchema, text: string): { value: unknown } | { message: string } {
  if (schema.type === 'integer') {
    const exact = parseInt64(text)
    const range = `an integer${schema.minimum !== undefined && schema.format !== 'int64' ? ` from ${schema.minimum} to ${schema.maximum}` : ' (int64)'}`
    if (exact === undefined) return { message: `must be ${range}` }
    if (schema.format === 'int64') return { value: exact }
    const value = Number(exact)
    if ((schema.minimum !== undefined && value < schema.minimum) || (schema.maximum !== undefined && value > schema.maximum)) {
      return { message: `must be ${range}` }
    }
    return { value }
  }
  if (schema.enum && !schema.enum.includes(text)) return { message: `must be one of ${schema.enum.join(', ')}` }
  if (schema.minLength !== undefined && text.length < schema.minLength) return { message: 'must not be empty' }
  if ((schema.maxLength !== undefined && text.length > schema.maxLength) ||
      (schema.pattern !== undefined && !patternOf(schema.pattern).test(text))) {
    return { message: 'is not valid' }
  }
  return { value: text }
}

/**
 * Query strings, path segments and headers are text: parse each declared value strictly,
 * ignore the rest. Headers are only checked: the request keeps all of them, as sent.
 */
function compileText (part: 'query' | 'path' | 'header', schema: JsonSchema) {
  const properties = Object.entries(schema.properties ?? {})
  const required = new Set(schema.required ?? [])
  return (data: unknown) => {
    const input = (data ?? {}) as Record<string, unknown>
    const value: Record<string, unknown> = {}
    const details: ErrorDetail[] = []
    for (const [declared, property] of properties) {
      // Node lowercases header names; a custom compiler gets the schema as declared.
      const key = part === 'header' ? declared.toLowerCase() : declared
      const given = input[key]
      const field = `${part}.${key}`
      if (given === undefined) {
        if (property.default !== undefined) value[key] = property.default
        else if (required.has(key) && part === 'query') details.push({ field, message: 'is required' })
        continue
      }
      if (typeof given !== 'string') {
        details.push({ field, message: 'must be given once' })
        continue
      }
      const parsed = parseTextValue(property, given)
      if ('message' in parsed) details.push({ field, message: parsed.message })
      else value[key] = parsed.value
    }
    if (details.length > 0) return rejection(details)
    return { value: part === 'header' ? input : value }
  }
}

export function createValidatorCompiler (): FastifySchemaCompiler<JsonSchema> {
  const ajv = createBodyAjv()
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return compileBody(ajv, schema)
    if (httpPart === 'querystring') return compileText('query', schema)
    if (httpPart === 'params') return compileText('path', schema)
    if (httpPart === 'headers') return compileText('header', schema)
    throw new Error(`no validator for ${httpPart ?? 'unknown part'}`)
  }
}

type BuildValidator = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>

/**
 * The compiler above as Fastify's schema controller takes it (`compilersFactory.buildValidator`):
 * given that way, Fastify does not load its own Ajv compiler at start, which
 * `setValidatorCompiler` leaves it to do. Fastify calls the factory with its shared schemas and
 * Ajv options, which this compiler does not need (it adds the shared schemas itself); the cast
 * is there because the option's type names @fastify/ajv-compiler's own signature.
 */
export function validatorFactory (): BuildValidator {
  const compiler = createValidatorCompiler()
  return (() => compiler) as unknown as BuildValidator
}
