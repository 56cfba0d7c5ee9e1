import { inBatches } from './in-batches';

describe('inBatches', () => {
  it('cuts a list into batches of at most the size, in order, every item once', () => {
    expect(inBatches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(inBatches([1, 2], 2)).toEqual([[1, 2]]);
    expect(inBatches([], 100)).toEqual([]);
  });

  it('refuses a size that is not a positive integer (it would loop or drop items)', () => {
    expect(() => inBatches([1], 0)).toThrow(RangeError);
    expect(() => inBatches([1], 1.5)).toThrow(RangeError);
  });
});
