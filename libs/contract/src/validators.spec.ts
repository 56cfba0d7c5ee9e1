import { ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '@app/errors';
import { ListPetsQueryDto } from './list-pets.query.dto';
import { NewPetDto } from './pet.dto';
import { PetIdParamsDto } from './pet-id.params.dto';
import { ContractValidationPipe } from './validation.pipe';
import { petNameProblem } from './validators';

const pipe = new ContractValidationPipe();
const body = (metatype: unknown): ArgumentMetadata => ({ type: 'body', metatype: metatype as never });
const query = (metatype: unknown): ArgumentMetadata => ({ type: 'query', metatype: metatype as never });

async function rejection(value: unknown, metadata: ArgumentMetadata): Promise<string> {
  try {
    await pipe.transform(value, metadata);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).message;
  }
  throw new Error('expected a rejection');
}

describe('petNameProblem', () => {
  it.each([
    ['Rex', undefined],
    [' Rex ', undefined],
    ['x'.repeat(100), undefined],
    ['🐕'.repeat(100), undefined],
    ['', 'must be 1 to 100 characters long'],
    ['x'.repeat(101), 'must be 1 to 100 characters long'],
    ['\t', 'must not be blank or contain control characters'],
    ['\u00a0\u2003', 'must not be blank or contain control characters'],
    ['a\u007fb', 'must not be blank or contain control characters'],
    ['a\ud83db', 'must be well-formed Unicode (no lone surrogates)'],
  ])('%j → %s', (name, problem) => {
    expect(petNameProblem(name)).toBe(problem);
  });
});

describe('ContractValidationPipe', () => {
  it('turns a valid body into a NewPetDto without changing it', async () => {
    const result = await pipe.transform({ name: 'Rex', categoryId: 1, status: 'sold' }, body(NewPetDto));
    expect(result).toBeInstanceOf(NewPetDto);
    expect(result).toEqual({ name: 'Rex', categoryId: 1, status: 'sold' });
  });

  it('reports only the first broken rule of each field', async () => {
    expect(await rejection({ categoryId: 'x' }, body(NewPetDto))).toBe(
      'name is required; categoryId must be an integer from 1 to 9007199254740991',
    );
  });

  it('parses only plain decimal digits in the query', async () => {
    expect(await pipe.transform({ limit: '25', status: 'pending' }, query(ListPetsQueryDto))).toEqual({
      limit: 25,
      status: 'pending',
    });
    expect(await rejection({ limit: '0x10' }, query(ListPetsQueryDto))).toContain('limit must be an integer');
    expect(await rejection({ limit: ['1', '2'] }, query(ListPetsQueryDto))).toContain('limit must be an integer');
  });

  it('parses the path id and refuses ids beyond 2^53-1', async () => {
    expect(await pipe.transform({ petId: '42' }, { type: 'param', metatype: PetIdParamsDto })).toEqual({ petId: 42 });
    expect(await rejection({ petId: '9007199254740992' }, { type: 'param', metatype: PetIdParamsDto })).toContain(
      'petId must be an integer from 1 to 9007199254740991',
    );
  });

  it('refuses bodies that are not JSON objects', async () => {
    expect(await rejection(undefined, body(NewPetDto))).toBe('A JSON request body is required.');
    expect(await rejection([], body(NewPetDto))).toBe('The request body must be a JSON object.');
  });
});
