'use strict'
// The plugin the vendored tests register: @fastify/rate-limit itself, with hotcount's
// FastifyRateLimitStore as its default store, so that every test that brings no store of its
// own counts in hotcount. setup.mjs hands the store in (it is an ES module, built in build/).
const real = require('@fastify/rate-limit')

let Store = null

function plugin (fastify, opts, next) {
  if (Store === null) throw new Error('run with --import ./test/peers/fastify-rate-limit/setup.mjs')
  const options = opts.store === undefined && opts.redis === undefined ? { ...opts, store: Store } : opts
  return real(fastify, options, next)
}
// What fastify-plugin put on the real plugin (no encapsulation, its name, its Fastify range).
for (const key of Reflect.ownKeys(real)) {
  if (key !== 'length' && key !== 'name' && key !== 'prototype') plugin[key] = real[key]
}

module.exports = plugin
module.exports.default = plugin
module.exports.fastifyRateLimit = plugin
module.exports.useStore = (store) => { Store = store }
