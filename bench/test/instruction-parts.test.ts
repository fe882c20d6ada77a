import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { CLOCK_DRIVEN, instructionParts } from '../src/instruction-parts.ts'

// Where Node put three compiled functions and a regular expression, as --perf-basic-prof writes it.
const PERF_MAP = [
  '1000000 100 JS:*getPet file:///srv/petstore/src/pets/get-pet.ts:40:10',
  '1000200 80 JS:~header /srv/petstore/node_modules/fastify/lib/reply.js:120:3',
  "1000300 40 RegExp: src: '^\\d+$' flags: ''",
  '1000400 40 JS:*\'keyVersion file:///srv/petstore/src/store/sqlite/sqlite-store.ts:64:14',
  ''
].join('\n')

// callgrind's compressed format: names given once as "(id) name" then as "(id)"; positions
// absolute, relative (+N, -N) or the same as the line before (*); the line after "calls=" is
// what the call cost in all, counted again in the callee's own lines.
const DUMP = `# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 910

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) 0x0000000001000010
16 100
+2 50
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfn=(2) memcpy
calls=3 0
* 400
* 7
fn=(3) 0x0000000001000210
0 30
-5 20
ob=(2)
fn=(2)
0 400
ob=(1)
fn=(4) 0x0000000001000310
0 60
fn=(5) Builtins_StringAdd_CheckNone
0 90
fn=(6) 0x0000000009000000
0 43
fn=(7) uv__run_timers
0 5
cfn=(3)
calls=1 0
0 50
cfn=(10) uv__run_timers'2
calls=1 0
0 75
fn=(10)
0 3
cfn=(3)
calls=1 0
0 72
fn=(8) 0x0000000001000410
0 30
cfn=(5)
calls=1 0
0 40
cfn=(11) 0x0000000001000410'2
calls=1 0
0 20
fn=(11)
0 20
fn=(9) uv_run
0 2
cfn=(7)
calls=1 0
0 130
fn=(1)
cfn=(8)
calls=2 0
0 90
cfn=(12) Builtins_CEntry_Return1_ArgvOnStack_NoBuiltinExit
calls=1 0
0 50
fn=(12)
0 4
cfn=(13) v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral(int, unsigned long*, v8::internal::Isolate*)
calls=2 0
0 46
fn=(13)
0 30
cfn=(5)
calls=1 0
0 16
fn=(5)
0 16

totals: 910
`

test('instructionParts gives each function\'s own instructions by part, whatever form a position takes, and leaves a call\'s cost to the callee: the parts add up to the summary', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-parts-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'perf.map'), PERF_MAP)
  writeFileSync(join(dir, 'callgrind.out'), DUMP)
  const { own, clockDriven, literalsInRuntime } = instructionParts(join(dir, 'callgrind.out'), join(dir, 'perf.map'))
  assert.deepEqual(Object.fromEntries(own), {
    'src/pets/get-pet.ts': 157,
    'Fastify and its router': 50,
    'C libraries (memory copies, locks)': 400,
    'regular expression /^\\d+$/': 60,
    'V8: strings (joining, lower case, numbers to text)': 106,
    'V8: other builtins': 4,
    'V8: runtime (C++)': 30,
    'other native code': 43,
    'src/store/sqlite/sqlite-store.ts': 50,
    'Node: C++ (HTTP parser, sockets, text encoding)': 10
  })
  assert.equal([...own.values()].reduce((sum, count) => sum + count, 0), 910)
  // Each once with all it calls, a request's call of the key version included: an entry again
  // within itself (callgrind's name'2) is not counted again.
  assert.deepEqual(Object.fromEntries(clockDriven), {
    [CLOCK_DRIVEN[0]![1]]: 130,
    [CLOCK_DRIVEN[1]![1]]: 90
  })
  // The runtime's definition of a literal's properties, with the string work it called.
  assert.equal(literalsInRuntime, 46)
})
