import { Writable } from 'node:stream';
import { LogLevelName } from '../log-level';
import { PinoLoggerService, createAppLogger } from './logger';

/** The JSON lines an app's logger writes at `level`. */
function capture(level: LogLevelName): { service: PinoLoggerService; lines: () => Array<Record<string, unknown>> } {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const logger = createAppLogger('gateway', level, destination as never);
  return {
    service: new PinoLoggerService(logger),
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe("PinoLoggerService: Nest's start-up narration", () => {
  it('is left out at the default level, while an app line at the same level is written', () => {
    const { service, lines } = capture('log');
    service.log('Mapped {/v1/pets, GET} route', 'RouterExplorer');
    service.log('PetsProxyController {/v1/pets}:', 'RoutesResolver');
    service.log('AppModule dependencies initialized', 'InstanceLoader');
    service.log('Starting Nest application...', 'NestFactory');
    service.log('Nest application successfully started', 'NestApplication');
    service.log('Gateway on http://localhost:3000/v1', 'Gateway');
    expect(lines().map((line) => [line.level, line.context, line.msg])).toEqual([
      [30, 'Gateway', 'Gateway on http://localhost:3000/v1'],
    ]);
  });

  it('is written at debug', () => {
    const { service, lines } = capture('debug');
    service.log('Mapped {/v1/pets, GET} route', 'RouterExplorer');
    expect(lines().map((line) => [line.level, line.context])).toEqual([[20, 'RouterExplorer']]);
  });
});
