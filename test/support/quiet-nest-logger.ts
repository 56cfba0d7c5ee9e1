import { Logger } from '@nestjs/common';

/**
 * Unit tests build services without an app, so Nest's default logger would print their lines (a key filter
 * built, a fault logged on purpose) between Jest's results, and so would an e2e file that runs migrations without an
 * app. Silenced for every project (jest.config.js) until an app brings its own logger (NestFactory installs it); a
 * test that checks a line spies on Logger.prototype, which still sees every call.
 */
Logger.overrideLogger(false);
