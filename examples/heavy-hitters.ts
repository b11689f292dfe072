// examples/heavy-hitters.ts
import { HeavyHitters } from 'hotcount';

const hh = new HeavyHitters({ k: 3 });
// A skewed stream: customer-i makes about 1000 / i requests.
for (let i = 1; i <= 1000; i++) {
  for (let n = 0; n < Math.floor(1000 / i); n++) hh.add(`customer-${i}`);
}
for (const { key, count, lowerBound, upperBound } of hh.top()) {
  console.log(`${key}: ${count} (true count in [${lowerBound}, ${upperBound}])`);
}
