import { Logger } from '@nestjs/common';

/**
 * Unit tests build services without an app, so Nest's default logger would print their lines (a key filter
 * built, a fault logged on purpose) between Jest's results. Silenced for the unit project (jest.config.js); a
 * test that checks a line spies on Logger.prototype, which still sees every call.
 */
Logger.overrideLogger(false);
