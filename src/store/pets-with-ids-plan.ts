import type { Pet } from '../contract/schemas.ts'
import type { PetsWithIdsImport } from './types.ts'

/** What a batch of pets with ids becomes: the pets to insert and how many are there already, or why it is refused. */
export type PetsWithIdsPlan = { insert: Pet[], skipped: number } | Extract<PetsWithIdsImport, { outcome: 'refused' }>

/**
 * Sorts a batch (in file order) against what the store holds: `stored` has the stored pets with
 * the batch's ids (the planned pets are added to it), `highest` is the largest id the store has ever assigned. Same rules for both
 * stores, so that an import run twice, or resumed, writes each pet once.
 */
export function planPetsWithIds (pets: Pet[], stored: Map<bigint, Pet>, highest: bigint): PetsWithIdsPlan {
  const insert: Pet[] = []
  let skipped = 0
  for (const [index, pet] of pets.entries()) {
    const existing = stored.get(pet.id)
    if (existing !== undefined) {
      if (!samePet(existing, pet)) return { outcome: 'refused', index, reason: `pet ${pet.id} is already stored with other values: ${describe(existing)}` }
      skipped++
      continue
    }
    if (pet.id <= highest) {
      return { outcome: 'refused', index, reason: `id ${pet.id} is new but not above ${highest}, the largest id the store has assigned; new ids only grow` }
    }
    insert.push(pet)
    highest = pet.id
    // A later line with the same id meets this pet as if it were stored already.
    stored.set(pet.id, pet)
  }
  return { insert, skipped }
}

const samePet = (a: Pet, b: Pet) => a.name === b.name && a.categoryId === b.categoryId && a.status === b.status

const describe = (pet: Pet) => `name ${JSON.stringify(pet.name)}, categoryId ${pet.categoryId}, status ${pet.status ?? 'none'}`
