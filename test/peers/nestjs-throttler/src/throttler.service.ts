// The storage the service spec tests, under the default's name: hotcount's.
import type { ThrottlerStorage } from '@nestjs/throttler';
import { storageClass } from './storage';

export type ThrottlerStorageService = ThrottlerStorage;
export const ThrottlerStorageService = storageClass();
