import { formatDuration } from './helpers';

describe('formatDuration: seconds as a person reads them', () => {
  it.each([
    [0, '0 s'],
    [0.2, '1 s'],
    [42, '42 s'],
    [60, '1 min'],
    [185, '3 min 5 s'],
    [3_600, '1 h'],
    [86_162, '23 h 56 min'],
    [86_400, '1 d'],
    [187_200, '2 d 4 h'],
    [-1, '-1'],
  ])('%s -> %s', (seconds, shown) => {
    expect(formatDuration(seconds)).toBe(shown);
  });
});
