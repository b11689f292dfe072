// examples/nest.ts
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { SketchThrottlerStorage } from 'hotcount/nest';

// @nestjs/throttler as its users know it, counting in fixed memory: 2 a minute per client.
// In a Nest project, @Controller(), @Get() and @Module() decorate the classes; here they are
// called as functions, so that the file runs as it is (`node examples/nest.ts`).
class HelloController {
  hello() {
    return 'hello\n';
  }
}
Get()(
  HelloController.prototype,
  'hello',
  Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello') as PropertyDescriptor,
);
Controller()(HelloController);

class AppModule {}
Module({
  imports: [
    ThrottlerModule.forRoot({
      throttlers: [{ ttl: 60_000, limit: 2 }],
      storage: new SketchThrottlerStorage(),
    }),
  ],
  controllers: [HelloController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})(AppModule);

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, '127.0.0.1');
const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');

const statuses = [];
for (let i = 0; i < 3; i++) statuses.push((await fetch(url)).status);
console.log(statuses.join(' '));
await app.close();
