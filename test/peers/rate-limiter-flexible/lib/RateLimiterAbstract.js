// The installed rate-limiter-flexible's own module, as the vendored tests require it.
module.exports = require('rate-limiter-flexible/lib/RateLimiterAbstract');
