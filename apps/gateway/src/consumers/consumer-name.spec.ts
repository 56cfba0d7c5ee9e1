import { SPECIAL_ROWS } from '../usage/usage-recorder';
import { CONSUMER_NAME_PATTERN } from './consumer-name';

/** The usage history and its CSV rely on the name rule: no consumer can be a special row, none needs CSV quoting. */
describe('CONSUMER_NAME_PATTERN', () => {
  it.each(SPECIAL_ROWS)('refuses the usage row name %s', (name) => {
    expect(CONSUMER_NAME_PATTERN.test(name)).toBe(false);
  });

  it.each(['a,b', 'a"b', '"ab"', 'ab,', 'a\r\nb'])('refuses %j (the CSV export writes names unquoted)', (name) => {
    expect(CONSUMER_NAME_PATTERN.test(name)).toBe(false);
  });

  it('takes an ordinary name', () => {
    expect(CONSUMER_NAME_PATTERN.test('acme-prod_2.eu')).toBe(true);
  });
});
