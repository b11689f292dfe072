// examples/flexible.ts
import { RateLimiterSketch } from 'hotcount/flexible';

// rate-limiter-flexible's login protection, in fixed memory: at most 100 failed logins a day per
// address, and 3 consecutive ones per user name and address, each then blocked. Only the class
// changes; a site that used RateLimiterMemory keeps every call.
const byAddress = new RateLimiterSketch({
  keyPrefix: 'login_fail_ip_per_day',
  points: 100,
  duration: 60 * 60 * 24,
  blockDuration: 60 * 60 * 24,
});
const byUserAndAddress = new RateLimiterSketch({
  keyPrefix: 'login_fail_consecutive_username_and_ip',
  points: 3,
  duration: 60 * 60 * 24 * 90,
  blockDuration: 60 * 60,
});

async function login(user: string, password: string, address: string): Promise<string> {
  const key = `${user}_${address}`;
  const [perUser, perAddress] = await Promise.all([
    byUserAndAddress.get(key),
    byAddress.get(address),
  ]);
  let retryMs = 0;
  if (perAddress !== null && perAddress.consumedPoints > byAddress.points) {
    retryMs = perAddress.msBeforeNext;
  } else if (perUser !== null && perUser.consumedPoints > byUserAndAddress.points) {
    retryMs = perUser.msBeforeNext;
  }
  if (retryMs > 0) return `429 (retry in ${Math.ceil(retryMs / 1000)} s)`;
  if (password === 'right') {
    if (perUser !== null && perUser.consumedPoints > 0) await byUserAndAddress.delete(key);
    return '200';
  }
  try {
    await Promise.all([byAddress.consume(address), byUserAndAddress.consume(key)]);
  } catch (rejected) {
    if (rejected instanceof Error) throw rejected; // not a refusal: a fault
    return `429 (retry in ${Math.ceil((rejected as { msBeforeNext: number }).msBeforeNext / 1000)} s)`;
  }
  return '401';
}

const answers = [];
for (let i = 0; i < 4; i++) answers.push(await login('alice', 'wrong', '203.0.113.7'));
answers.push(await login('alice', 'right', '203.0.113.7'));
answers.push(await login('bob', 'right', '203.0.113.7'));
console.log(answers.join(', '));
