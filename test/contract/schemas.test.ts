import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import { ConfigSchema } from '../../src/config.ts'
import { createPetSchema } from '../../src/pets/create-pet.ts'
import { getPetSchema } from '../../src/pets/get-pet.ts'
import { listPetsSchema } from '../../src/pets/list-pets.ts'
import { sharedSchemas } from '../../src/contract/schemas.ts'

/**
 * The service compiles its schemas without checking them against the JSON Schema meta-schema
 * (that check compiles the meta-schema first, which slows every start). They are fixed, so
 * they are checked here instead: every schema the validators compile is valid draft-07 JSON
 * Schema.
 */
const SCHEMAS: Record<string, object> = {
  ...Object.fromEntries(sharedSchemas.map((schema) => ['$id' in schema ? String(schema.$id) : 'a shared schema without $id', schema])),
  config: ConfigSchema,
  'listPets querystring': listPetsSchema.querystring,
  'createPet headers': createPetSchema(24).headers,
  'getPet params': getPetSchema(new Date('2031-01-01T00:00:00Z')).params
}

for (const [name, schema] of Object.entries(SCHEMAS)) {
  test(`${name} is valid JSON Schema`, () => {
    const ajv = new Ajv({ strict: false })
    assert.equal(ajv.validateSchema(schema), true, JSON.stringify(ajv.errors))
    assert.equal(ajv.errors, null)
  })
}
