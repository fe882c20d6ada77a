import { seedPets } from './bench/seed.ts'
await seedPets('sqlite:' + process.argv[2], Number(process.argv[3]))
