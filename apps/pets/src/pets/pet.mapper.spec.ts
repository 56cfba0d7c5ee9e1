import { PetStatus } from '@app/contract';
import { bigintToNumber, PetEntity } from './pet.entity';
import { rowToPetDto, toPetDto } from './pet.mapper';

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

describe('rowToPetDto', () => {
  it('answers what toPetDto answers for the same pet, from the bigint strings pg returns', () => {
    const row = { id: '9007199254740991', name: 'Rex', category_id: '4', status: PetStatus.Sold };
    expect(rowToPetDto(row)).toEqual({ id: Number.MAX_SAFE_INTEGER, name: 'Rex', categoryId: 4, status: 'sold' });
    expect(rowToPetDto({ ...row, id: '9' })).toEqual(toPetDto(entity(PetStatus.Sold)));
  });

  it('leaves status out when the row has none', () => {
    const pet = rowToPetDto({ id: '9', name: 'Rex', category_id: '4', status: null });
    expect(pet).toEqual(toPetDto(entity(null)));
    expect('status' in pet).toBe(false);
  });
});
