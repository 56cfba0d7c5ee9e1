import { IsInt, Max, Min } from 'class-validator';
import { EnvInteger } from './env-decorators';
import { ConfigurationError, loadEnvironment } from './environment';

class Sample {
  @EnvInteger()
  @IsInt({ message: 'PORT must be an integer from 1 to 9' })
  @Min(1, { message: 'PORT must be an integer from 1 to 9' })
  @Max(9, { message: 'PORT must be an integer from 1 to 9' })
  PORT = 3;
}

describe('loadEnvironment', () => {
  it('uses the defaults for absent or empty variables', () => {
    expect(loadEnvironment(Sample, {}).PORT).toBe(3);
    expect(loadEnvironment(Sample, { PORT: '' }).PORT).toBe(3);
  });

  it('converts what is set', () => {
    expect(loadEnvironment(Sample, { PORT: '7' }).PORT).toBe(7);
  });

  it('fails with one line naming the variable, the rule and the value', () => {
    expect(() => loadEnvironment(Sample, { PORT: 'seven' })).toThrow(
      new ConfigurationError('Invalid configuration: PORT must be an integer from 1 to 9 (got "seven")'),
    );
  });
});
