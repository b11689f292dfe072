export * from '@nestjs/throttler/dist/throttler.constants';
