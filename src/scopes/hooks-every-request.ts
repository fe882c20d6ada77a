/**
 * The plugins whose hooks every request runs. A scope copies the hooks its parent holds when it
 * is registered, so each scope names these as its dependencies: Fastify refuses to start when
 * one of them is missing or comes after the scope. (Tracing, when on, is registered before all
 * of them in app.ts: it is optional, so it cannot be named here.)
 */
export const HOOKS_EVERY_REQUEST = [
  'connection-limits',
  'lingering-close',
  'request-logging',
  'method-not-allowed',
  'http-metrics',
  'cors',
  'lifecycle',
  'security-headers',
  'load-shedding',
  'reply-cache',
  'error-replies'
]
