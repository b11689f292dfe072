/**
 * `node --import` this module, with HOTCOUNT_HIDE_MODULES=a,b in the environment: packages a and
 * b cannot be found, as in a project that has not installed them (the optional peers' tests).
 */
import { register } from 'node:module';

register(new URL('./hide-modules-hooks.js', import.meta.url), {
  data: (process.env.HOTCOUNT_HIDE_MODULES ?? '').split(',').filter(Boolean),
});
