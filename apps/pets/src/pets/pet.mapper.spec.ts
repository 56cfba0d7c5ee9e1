import { PetStatus } from '@app/contract';
import { bigintToNumber, PetEntity } from './pet.entity';
import { toPetDto } from './pet.mapper';

const entity = (status: PetStatus | null): PetEntity =>
  Object.assign(new PetEntity(), { id: 9, name: 'Rex', categoryId: 4, status });

describe('toPetDto', () => {
  it('returns exactly the contract fields', () => {
    expect(toPetDto(entity(PetStatus.Sold))).toEqual({ id: 9, name: 'Rex', categoryId: 4, status: 'sold' });
  });

  it('leaves status out, rather than null, when it was not set', () => {
    const pet = toPetDto(entity(null));
    expect(pet).toEqual({ id: 9, name: 'Rex', categoryId: 4 });
    expect('status' in pet).toBe(false);
  });
});

describe('bigintToNumber', () => {
  it('turns pg bigint strings into exact numbers', () => {
    expect(bigintToNumber.from('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(bigintToNumber.from(null)).toBeNull();
  });
});
