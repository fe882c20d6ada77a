import { readFileSync } from 'node:fs'

/**
 * Where a dump's instructions went: each part's own, what each kind of clock-driven work cost in
 * all, and what object literals whose properties V8 defined in its runtime cost in all.
 */
export interface DumpParts { own: Map<string, number>, clockDriven: Map<string, number>, literalsInRuntime: number }

/**
 * Work the process does because time passed rather than because a request came, by the first
 * function of each (what it calls included). Under callgrind a request takes milliseconds
 * instead of tens of microseconds, so this work is shared among far fewer requests than at full
 * speed, and weighs on the count as it does not in service. Found by name: a function V8 inlined
 * into its caller has no name of its own and counts 0. The kinds do not call each other (the
 * key version is read by requests), so their figures add up.
 */
export const CLOCK_DRIVEN: Array<[RegExp, string]> = [
  [/^uv__run_timers$/, 'timers (Node\'s timers, the event loop delay monitor)'],
  [/^JS:[*~^+']*keyVersion /, 'the key version, read at most once a millisecond']
]

/**
 * V8's runtime defining an object literal's properties one at a time, where optimized code
 * usually stores them inline. Whether V8's optimized code for Node's process.nextTick takes this
 * path for its tick object (a literal with symbol keys) changes from one start of the same code
 * to the next, and with it a whole count, by over 30 000 instructions a request on the bare
 * baseline (docs/performance.md): the bench names it so that such a count can be told apart.
 */
export const LITERALS_IN_RUNTIME = /^v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral\(/

/**
 * Where a callgrind dump's instructions went, by part: each function's own instructions (not
 * what it calls), grouped by what it is. V8's compiled JavaScript has no symbols for valgrind;
 * Node's `--perf-basic-prof` writes where each compiled function lies (`/tmp/perf-PID.map`), and
 * that names it, with its file. A part is then a file of the repository (`src/auth/bearer.ts`),
 * a package, Node's own JavaScript, a regular expression V8 compiled (named by its source), or
 * a kind of V8 builtin, runtime or library code. What a function calls is counted where it
 * runs: a header's check in Node, a string's lower case in V8's builtin, whoever asked for it.
 * Beside the parts, the clock-driven work (CLOCK_DRIVEN) and the literals defined in V8's runtime
 * (LITERALS_IN_RUNTIME), each with all it calls, already counted in the parts.
 */
export function instructionParts (dump: string, perfMap: string): DumpParts {
  const code = readFileSync(perfMap, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [start, size, ...name] = line.split(' ')
    return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), name: name.join(' ') }
  }).sort((a, b) => a.start - b.start)
  const compiled = (address: number): string | undefined => {
    let low = 0
    let high = code.length - 1
    let found: typeof code[number] | undefined
    while (low <= high) {
      const middle = (low + high) >> 1
      if (code[middle]!.start <= address) { found = code[middle]; low = middle + 1 } else high = middle - 1
    }
    return found !== undefined && address < found.end ? found.name : undefined
  }
  const nameOf = (fn: string) => /^0x[0-9a-f]+/.test(fn) ? compiled(parseInt(fn, 16)) ?? '' : fn
  // callgrind's format: names are given once as "(id) name", then as "(id)"; a cost line starts
  // with its position, absolute, relative (+N, -N) or the same as the line before (*); the cost
  // line after "calls=" is what that call cost in all, already counted in the callee's own lines.
  const names = new Map<string, string>()
  const objects = new Map<string, string>()
  const named = (table: Map<string, string>, value: string) => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(value)
    if (match === null) return value
    if (match[2] !== undefined) table.set(match[1]!, match[2])
    return table.get(match[1]!) ?? value
  }
  const own = new Map<string, number>()
  const clockDriven = new Map(CLOCK_DRIVEN.map(([, kind]) => [kind, 0]))
  let literalsInRuntime = 0
  let fn = ''
  let object = ''
  let callee = ''
  let callCost = false
  for (const line of readFileSync(dump, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) fn = named(names, line.slice(3))
    else if (line.startsWith('ob=')) object = named(objects, line.slice(3))
    else if (line.startsWith('cob=')) named(objects, line.slice(4))
    else if (line.startsWith('cfn=')) callee = named(names, line.slice(4))
    else if (line.startsWith('calls=')) callCost = true
    else if (/^[0-9+*-]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0)
      if (callCost) {
        callCost = false
        // callgrind names a function entered again within itself name'2: that call is in the
        // cost of the outer one already.
        if (/'\d+$/.test(callee)) continue
        const kind = CLOCK_DRIVEN.find(([pattern]) => pattern.test(nameOf(callee)))?.[1]
        if (kind !== undefined) clockDriven.set(kind, clockDriven.get(kind)! + cost)
        if (LITERALS_IN_RUNTIME.test(callee)) literalsInRuntime += cost
      } else {
        const part = partOf(nameOf(fn), object)
        own.set(part, (own.get(part) ?? 0) + cost)
      }
    }
  }
  return { own, clockDriven, literalsInRuntime }
}

const BUILTIN_KINDS: Array<[RegExp, string]> = [
  [/IC_Megamorphic|KeyedHasIC|HasOwnProperty|ObjectHasOwn|FindOrderedHash/, 'V8: property and map lookups by name'],
  [/String|NumberToString|ToString/, 'V8: strings (joining, lower case, numbers to text)'],
  [/RegExp/, 'V8: calls of regular expressions'],
  [/Promise|Microtask|AsyncFunction|Await/, 'V8: promises'],
  [/RecordWrite|Allocate/, 'V8: allocation and write barriers']
]

/** The part a function belongs to: its name as the perf map or callgrind gives it, and its object file. */
function partOf (name: string, object: string): string {
  const script = /^JS:[*~^+']*\S* (\S+?)(?::\d+:\d+)?$/.exec(name)?.[1]
  if (script !== undefined) {
    if (!script.includes('/') && !script.startsWith('node:')) return 'code made at run time (serializers, validators)'
    if (script.startsWith('node:')) return 'Node: JavaScript (HTTP, streams, timers)'
    const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(script)?.[1]
    if (inPackage !== undefined) return inPackage === 'fastify' || inPackage === 'find-my-way' ? 'Fastify and its router' : `package ${inPackage}`
    return script.replace(/^.*?\/((?:src|bench)\/.*)$/, '$1')
  }
  if (name.startsWith('RegExp')) {
    const source = /src: '(.*)' flags/.exec(name)?.[1] ?? ''
    return source === '[^\\t\\x20-\\x7e\\x80-\\xff]' || source.startsWith('^[\\^_`a-zA-Z') ? 'Node: header name and value checks (regular expressions)' : `regular expression /${source}/`
  }
  if (name.startsWith('Builtin:') || name.startsWith('Builtins_')) return BUILTIN_KINDS.find(([pattern]) => pattern.test(name))?.[1] ?? 'V8: other builtins'
  if (/Scaveng|MarkCompact|Marking|Sweep|Evacuat|Heap::/.test(name)) return 'V8: garbage collection'
  if (/libcrypto/.test(object)) return 'OpenSSL'
  if (/^sqlite3|^btree|^pager|^unixShm|^vdbe/i.test(name)) return 'SQLite'
  if (/libc\.so|libstdc\+\+|libm\.so|libgcc/.test(object)) return 'C libraries (memory copies, locks)'
  if (/^llhttp|^node::|^uv_|^simdutf|^hdr_|halfsiphash|all_values_iter/.test(name)) return 'Node: C++ (HTTP parser, sockets, text encoding)'
  if (/^v8::|^void v8::|^unsigned long v8::|^v8_/.test(name)) return 'V8: runtime (C++)'
  return 'other native code'
}
