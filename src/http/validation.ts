import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorDetail } from './error-body.ts'
import { ApiError } from './errors.ts'
import { isInt64, parseInt64 } from '../contract/int64.ts'
import { INT64_MAX, INT64_MIN, sharedSchemas } from '../contract/schemas.ts'

/**
 * Request validation, stricter than Fastify's default in two ways:
 * bodies are never coerced ({"categoryId": "7"} is a 400), and int64 values are read exactly
 * (as the bigints the body parser makes of integer literals, from the raw text of the query
 * and path).
 */

interface JsonSchema {
  $id?: string
  $ref?: string
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

// ajv-formats is CommonJS: imported from ESM, its plugin is the module's `default` property.
const addFormats = addFormatsModule.default

export function createBodyAjv (): Ajv {
  // validateSchema off, as for the config: the schemas are fixed and test/contract/schemas.test.ts checks them.
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

/**
 * One line per field: ajv reports each failed keyword, the first one says enough; but an enum's
 * list of values says more than the `type: string` beside it.
 */
function firstErrorPerField (errors: ErrorObject[]): ErrorDetail[] {
  const seen = new Map<string, ErrorDetail>()
  for (const error of errors) {
    const field = fieldOf('body', error)
    if (!seen.has(field) || error.keyword === 'enum') seen.set(field, { field, message: describe(error) })
  }
  return [...seen.values()]
}

const NOT_INT64 = 'must be a signed 64-bit integer written without a fraction or exponent'
const OUT_OF_INT64 = `must be a signed 64-bit integer (${INT64_MIN} to ${INT64_MAX})`

function compileBody (ajv: Ajv, schema: JsonSchema) {
  // A shared schema (NewPet) is compiled once, under its $id, whether named or referenced.
  const id = schema.$id ?? schema.$ref
  const validate: ValidateFunction = (id === undefined ? undefined : ajv.getSchema(id)) ?? ajv.compile(schema)
  const properties = Object.entries((validate.schema as JsonSchema).properties ?? {})
  const declared = properties.map(([key]) => key)
  const int64Fields = properties.filter(([, property]) => property.format === 'int64').map(([key]) => key)
  return (data: unknown) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      return rejection([{ field: 'body', message: 'must be a JSON object' }])
    }
    const given = data as Record<string, unknown>
    // Only the declared fields go on: unknown fields are ignored, so they are never stored.
    const value: Record<string, unknown> = {}
    for (const key of declared) {
      if (given[key] !== undefined) value[key] = given[key]
    }
    // Ajv knows no bigint: it checks an int64 as the double JSON.parse alone would make of it
    // (so "7", 1.5 and 1e400 get its messages), and the exact value is checked below.
    for (const key of int64Fields) {
      const exact = value[key]
      if (typeof exact === 'bigint') value[key] = Number(exact)
    }
    if (!validate(value)) return rejection(firstErrorPerField(validate.errors ?? []))
    for (const key of int64Fields) {
      const exact = given[key]
      if (exact === undefined) continue
      // A fraction or an exponent (1.0, 1e3) left a number; an integer literal out of range, a bigint.
      if (typeof exact !== 'bigint') return rejection([{ field: `body.${key}`, message: NOT_INT64 }])
      if (!isInt64(exact)) return rejection([{ field: `body.${key}`, message: OUT_OF_INT64 }])
      value[key] = exact
    }
    return { value }
  }
}

const SHARED = new Map(sharedSchemas.map((shared) => shared as JsonSchema).map((shared) => [shared.$id, shared]))

function resolved (schema: JsonSchema): JsonSchema {
  const shared = schema.$ref === undefined ? undefined : SHARED.get(schema.$ref)
  return shared ? { ...shared, ...schema } : schema
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
  // A value may name a shared schema (status: PetStatus): it is checked against what that holds.
  // What depends on the schema alone is worked out here, once: each value's name as it arrives
  // (Node lowercases header names; a custom compiler gets the schema as declared) and as a
  // detail names it.
  const required = new Set(schema.required ?? [])
  const properties = Object.entries(schema.properties ?? {}).map(([declared, property]) => {
    const key = part === 'header' ? declared.toLowerCase() : declared
    return { key, field: `${part}.${key}`, property: resolved(property), required: required.has(declared) && part === 'query' }
  })
  // Headers are only checked. A validator that hands back a value makes Fastify store it as
  // extra headers, and every later read of request.headers then copies them all: a header
  // validator answers true, and the request keeps its headers as they came.
  const checksOnly = part === 'header'
  return (data: unknown) => {
    const input = (data ?? {}) as Record<string, unknown>
    const value: Record<string, unknown> = {}
    // Made for the first fault only: most requests have none.
    let details: ErrorDetail[] | undefined
    for (const { key, field, property, required } of properties) {
      const given = input[key]
      if (given === undefined) {
        if (property.default !== undefined && !checksOnly) value[key] = property.default
        else if (required) (details ??= []).push({ field, message: 'is required' })
        continue
      }
      if (typeof given !== 'string') {
        (details ??= []).push({ field, message: 'must be given once' })
        continue
      }
      const parsed = parseTextValue(property, given)
      if ('message' in parsed) (details ??= []).push({ field, message: parsed.message })
      else if (!checksOnly) value[key] = parsed.value
    }
    if (details !== undefined) return rejection(details)
    return checksOnly ? true : { value }
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

/** The shared schemas (Pet, NewPet, Error…), known to every route, its validator and its serializer by name. */
export const namedSchemas = fp(async function namedSchemas (app: FastifyInstance) {
  for (const schema of sharedSchemas) app.addSchema(schema)
}, { name: 'shared-schemas' })
