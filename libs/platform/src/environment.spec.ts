import { IsInt, Max, Min } from 'class-validator';
import { EnvInteger } from './env-decorators';
import { CommonEnvironment } from './common-environment';
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

describe('secrets in the environment', () => {
  it('never echoes a rejected secret', () => {
    expect(() => loadEnvironment(CommonEnvironment, { INTERNAL_SECRET: 'short-secret-15' })).toThrow(
      new ConfigurationError(
        'Invalid configuration: INTERNAL_SECRET must be at least 16 characters long (value hidden)',
      ),
    );
  });

  it('refuses a published placeholder in production, and only there', () => {
    const placeholder = 'change-me-internal-secret';
    expect(() => loadEnvironment(CommonEnvironment, { NODE_ENV: 'production', INTERNAL_SECRET: placeholder })).toThrow(
      'INTERNAL_SECRET is a published placeholder, refused in production: set a random secret (openssl rand -hex 32) (value hidden)',
    );
    expect(
      loadEnvironment(CommonEnvironment, { NODE_ENV: 'development', INTERNAL_SECRET: placeholder }).INTERNAL_SECRET,
    ).toBe(placeholder);
    const random = 'f3b9c2d8e1a7465b9c0d2e4f6a8b1c3d';
    expect(
      loadEnvironment(CommonEnvironment, { NODE_ENV: 'production', INTERNAL_SECRET: random }).INTERNAL_SECRET,
    ).toBe(random);
  });
});
