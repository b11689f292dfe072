export { ThrottlerStorage } from '@nestjs/throttler';
