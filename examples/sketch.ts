// examples/sketch.ts
import { CountMinSketch } from 'hotcount';

const sketch = new CountMinSketch(); // 16384 x 4, random secret
sketch.increment('customer-42'); // -> the estimate after the update
sketch.increment('customer-42', 5);
const estimate = sketch.estimate('customer-42'); // >= 6, and <= 6 + errorBound w.p. 1 - delta
console.log(`customer-42: ${estimate}, error bound ${sketch.errorBound.toFixed(4)}`);
