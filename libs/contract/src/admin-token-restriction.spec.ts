import { isFleetWide } from './admin-token-restriction';

describe('isFleetWide', () => {
  it('holds only for a token limited neither to its own consumers nor to some plans', () => {
    expect(isFleetWide({ ownConsumersOnly: false, plans: null })).toBe(true);
    expect(isFleetWide({ ownConsumersOnly: true, plans: null })).toBe(false);
    expect(isFleetWide({ ownConsumersOnly: false, plans: ['free'] })).toBe(false);
    // Limited to no plan at all is still limited: an empty list is not "every plan".
    expect(isFleetWide({ ownConsumersOnly: false, plans: [] })).toBe(false);
    expect(isFleetWide({ ownConsumersOnly: true, plans: ['free', 'pro'] })).toBe(false);
  });
});
