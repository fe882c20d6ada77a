import type { Metric } from 'prom-client'

type RequestLabel = 'route' | 'method' | 'status'
type Labels = Record<RequestLabel, string>
/** One sample line of the exposition, as prom-client's own metrics give them from get(). */
interface Sample { labels: Record<string, string | number>, value: number, metricName?: string }

interface Series {
  labels: Labels
  count: number
  sum: number
  /** Observations per bucket, not cumulative; the last slot is for values above every bound. */
  perBucket: Float64Array
}

/**
 * http_requests_total and http_request_duration_seconds, counted per (route, method, status).
 * prom-client's Counter and Histogram check and hash their labels on every call (a sorted
 * join of the label values, for each of the two metrics): with a log line and an answer of a
 * few dozen microseconds, that was 2–3 % of a request. Here a request costs one map lookup by
 * a joined key and three additions; prom-client's registry reads the totals when /metrics is
 * served, through get() in the shape its own metrics give (the exposition is the same, as
 * test/request-metrics.test.ts checks against prom-client's).
 */
export class RequestMetrics {
  readonly #series = new Map<string, Series>()
  readonly #bounds: readonly number[]
  readonly counter: Metric
  readonly histogram: Metric

  constructor (names: { counter: string, histogram: string }, help: { counter: string, histogram: string }, bounds: readonly number[]) {
    this.#bounds = bounds
    this.counter = this.#metric(names.counter, help.counter, 'counter', () => [...this.#series.values()].map((series) => ({ labels: series.labels, value: series.count })))
    this.histogram = this.#metric(names.histogram, help.histogram, 'histogram', () => this.#histogramValues(names.histogram))
  }

  record (route: string, method: string, status: number, seconds: number): void {
    const id = route + ' ' + method + ' ' + status
    let series = this.#series.get(id)
    if (series === undefined) {
      series = { labels: { route, method, status: String(status) }, count: 0, sum: 0, perBucket: new Float64Array(this.#bounds.length + 1) }
      this.#series.set(id, series)
    }
    series.count++
    series.sum += seconds
    let bucket = 0
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]!) bucket++
    series.perBucket[bucket]!++
  }

  #histogramValues (name: string): Sample[] {
    const values: Sample[] = []
    for (const { labels, count, sum, perBucket } of this.#series.values()) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += perBucket[i]!
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` })
      })
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` })
      values.push({ labels, value: sum, metricName: `${name}_sum` })
      values.push({ labels, value: count, metricName: `${name}_count` })
    }
    return values
  }

  /**
   * An object prom-client's registry takes as a metric: it calls get() and reset(), and may
   * rename it (OpenMetrics output drops a counter's _total), so get() reads the name back.
   * The two metrics count the same requests, so resetting either resets both.
   */
  #metric (name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): Metric {
    const metric: { name: string, help: string, type: string, aggregator: string, get(): Promise<unknown>, reset(): void } = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name: metric.name, help, type, aggregator: 'sum', values: values() }),
      reset: () => { this.#series.clear() }
    }
    return metric as unknown as Metric
  }
}
