import { normalizeIP } from '@fastify/rate-limit'

/**
 * The key a client address is counted under, by the connection share (client-connections.ts)
 * and the failed-auth rate limit (auth/rate-limits.ts): normalizeIP's, so an IPv4-mapped IPv6
 * address (a dual-stack listener's view of an IPv4 client) is its IPv4 address, and an IPv6
 * address stands for its /64, which one host can otherwise walk through. An address without a
 * colon is IPv4, which normalizeIP returns as it is, after testing it against its long IPv6
 * pattern: that test was most of this key's cost on every 401.
 */
export const addressKey = (address: string) => address.includes(':') ? normalizeIP(address) : address
