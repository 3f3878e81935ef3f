/**
 * Runs the example: `CHURN_RISK_WEBHOOK_SECRET=... PORT=3000 npm start`. Prints
 * `listening on http://127.0.0.1:PORT` once it listens. On SIGTERM (or SIGINT) the receiver stops
 * taking deliveries, in-flight alerts finish, Nest closes the server, and the process exits 0.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module.js';

const secret = process.env.CHURN_RISK_WEBHOOK_SECRET;
if (secret === undefined || secret === '') {
  console.error('Set CHURN_RISK_WEBHOOK_SECRET to the webhook signing secret.');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

const module = AppModule.forRoot({
  secret,
  alertLogFile: process.env.ALERT_LOG_FILE,
  workMs: process.env.ALERT_WORK_MS === undefined ? undefined : Number(process.env.ALERT_WORK_MS),
});
// rawBody: Nest's JSON parser stays on for every route and also keeps the exact bytes on
// req.rawBody, which the webhook middleware verifies the signature over. (Nest declares its
// options as a class; a plain object is what it expects at run time.)
// eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
const app = await NestFactory.create<NestExpressApplication>(module, { rawBody: true });
app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
await app.listen(port, host);
const { port: listening } = app.getHttpServer().address() as AddressInfo;
console.log(`listening on http://${host}:${listening}`);
