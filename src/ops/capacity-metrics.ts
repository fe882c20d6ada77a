import { constrainedMemory } from 'node:process'
import { totalmem } from 'node:os'
import { Gauge, type Registry } from 'prom-client'
import type { PoolFigures, Store } from '../store/types.ts'

/**
 * The limits an instance runs into, read when /metrics is served (each gauge's collect
 * callback), so that no request pays for them: the memory the process may use, and, on a store
 * with connection pools (PostgreSQL), each pool's size and use. The alert rules compare use
 * against them (deploy/prometheus/alerts.yml).
 */
export function capacityMetrics (registry: Registry, store: Pick<Store, 'pools'>): void {
  registry.registerMetric(new Gauge({
    name: 'petstore_memory_limit_bytes',
    help: 'Memory the process may use before it is killed: its cgroup (container) limit, else the machine\'s memory.',
    registers: [],
    collect () { this.set(memoryLimit()) }
  }))
  const pools = store.pools?.bind(store)
  if (pools) poolMetrics(registry, pools)
}

/**
 * The cgroup limit when there is one. Without one, Node gives 0 or a figure above the machine's
 * memory (an unlimited cgroup's "max"), and the machine's memory is the bound.
 */
export function memoryLimit (limit = constrainedMemory(), machine = totalmem()): number {
  return limit > 0 && limit < machine ? limit : machine
}

type Figure = Exclude<keyof PoolFigures, 'pool'>

/** The gauges of the pools `pools` reports, by pool. */
export function poolMetrics (registry: Registry, pools: () => PoolFigures[]): void {
  const registers = [registry]
  const gauge = (figure: Figure, name: string, help: string) => new Gauge({
    name,
    help,
    labelNames: ['pool'],
    registers,
    collect () {
      for (const figures of pools()) this.set({ pool: figures.pool }, figures[figure])
    }
  })
  gauge('max', 'petstore_db_pool_max_connections', 'Connections the pool may open, by pool (main, inserts): its share of DATABASE_POOL_MAX.')
  gauge('total', 'petstore_db_pool_connections', 'Connections the pool holds open, busy or idle, by pool.')
  gauge('idle', 'petstore_db_pool_idle_connections', 'Open connections no store call is using, by pool.')
  gauge('waiting', 'petstore_db_pool_waiting_calls', 'Store calls waiting for a connection, by pool: above 0 only while every connection is busy.')
}
