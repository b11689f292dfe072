// examples/threads.ts
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import { CountMinSketch, type SketchHandle } from 'hotcount';

if (isMainThread) {
  const sketch = new CountMinSketch({ shared: true });
  // Two workers (this same file) count into the one sketch.
  const workers = [1, 2].map(
    () => new Worker(new URL(import.meta.url), { workerData: sketch.handle }),
  );
  await Promise.all(workers.map((worker) => new Promise((done) => worker.on('exit', done))));
  console.log(`customer-7: ${sketch.estimate('customer-7')} of ${sketch.total} requests`);
} else {
  const sketch = CountMinSketch.attach(workerData as SketchHandle); // the same counters
  for (let request = 0; request < 100_000; request++) {
    const customer = `customer-${request % 10}`; // your request's customer
    sketch.increment(customer);
  }
}
