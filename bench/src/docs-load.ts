import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { luaString, runWrk } from './wrk.ts'
import { Latencies, median } from './load.ts'
import { prepareStore, serviceEnv } from './store.ts'
import { pinSelfToCore1, serviceScript, START_FLAGS, startServer } from './servers.ts'

/**
 * npm run bench:docs -- [--rounds 3] [--duration 5] [--limit N]
 *
 * What pulling the docs script flat out does to the API: the p99 of `list 20` at a steady
 * rate the service keeps up with (--rate a second, 4 connections, autocannon) alone, then while
 * wrk's 16 connections fetch the docs script as a browser does (Brotli) without a key. Rounds alternate quiet and loaded; the table
 * gives the medians and their ratio. By default the failed-auth limit is out of the way
 * (FAILED_AUTH_LIMIT_PER_MINUTE huge), so the flood is served in full: the serving cost alone.
 * `--limit 60` runs with the shipped limit, where the flood gets 429 after its first
 * sixty requests a minute.
 */
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    rate: { type: 'string', default: '500' },
    limit: { type: 'string', default: '1000000000' }
  }
})
const rounds = Number(flags.rounds)
const duration = Number(flags.duration)
const rate = Number(flags.rate)
pinSelfToCore1()

/** `list 20` at `rate` requests a second: the p99 of its responses, in milliseconds. */
async function listP99 (url: string, key: string): Promise<number> {
  const latencies = new Latencies()
  await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({ url: `${url}/v1/pets?limit=20`, headers: { authorization: `Bearer ${key}` }, connections: 4, overallRate: rate, duration }, (error, done) => error ? reject(error) : resolve(done))
    run.on('response', (_client, _status, _bytes, ms) => { latencies.add(ms) })
  })
  return latencies.percentiles(99)[0]!
}

const prepared = await prepareStore(10_000)
const server = await startServer('service', serviceScript(), { ...serviceEnv(prepared.databaseUrl), FAILED_AUTH_LIMIT_PER_MINUTE: flags.limit! }, '/readyz', START_FLAGS)
try {
  const page = await (await fetch(`${server.url}/docs/`)).text()
  const script = /<script src="(js\/scalar\.js[^"]*)"/.exec(page)?.[1]
  if (!script) throw new Error('the docs page names no script')
  const docs = `wrk.headers["accept-encoding"] = "gzip, deflate, br"
function request() return wrk.format("GET", ${luaString(`/docs/${script}`)}) end
`
  const quiet: number[] = []
  const loaded: number[] = []
  const flood: Array<{ rps: number, errorStatuses: number }> = []
  for (let round = 0; round < rounds; round++) {
    quiet.push(await listP99(server.url, prepared.key))
    const [api, pulled] = await Promise.all([
      listP99(server.url, prepared.key),
      runWrk(server.url, docs, { connections: 16, duration })
    ])
    loaded.push(api)
    flood.push(pulled)
  }
  const rows = [
    ['list 20 p99, quiet (ms)', median(quiet).toFixed(2)],
    ['list 20 p99, docs pulled flat out (ms)', median(loaded).toFixed(2)],
    ['ratio', (median(loaded) / median(quiet)).toFixed(2)],
    ['docs requests/s (median)', median(flood.map((f) => f.rps)).toFixed(0)],
    ['docs requests refused (429), all rounds', String(flood.reduce((sum, f) => sum + f.errorStatuses, 0))]
  ]
  process.stdout.write(`\nfailed-auth limit ${flags.limit}/min, list 20 at ${rate}/s, ${rounds} rounds of ${duration} s\n\n| measure | value |\n|---|--:|\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join('\n')}\n`)
} finally {
  await server.stop()
  await prepared.cleanup()
}
