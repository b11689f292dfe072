// examples/quantiles.ts
import { SlidingQuantiles } from 'hotcount';

// Durations of the last minute in milliseconds: every quantile within 1% of the exact one.
const latency = new SlidingQuantiles({ windowMs: 60_000, relativeAccuracy: 0.01 });
// 1,000 requests: most take 20 to 40 ms, one in fifty 1,200 ms.
for (let i = 0; i < 1000; i++) latency.add(i % 50 === 0 ? 1200 : 20 + (i % 21));
const minute = latency.snapshot();
const ms = (q: number) => minute.quantile(q)?.toFixed(1);
console.log(`p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms, max ${minute.max} ms of ${minute.count}`);
