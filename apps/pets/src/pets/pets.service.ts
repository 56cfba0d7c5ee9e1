import { LIST_LIMIT, ListPetsQueryDto, NewPetDto, PetDto, PetStatus } from '@app/contract';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageCursorCodec } from './page-cursor';
import { PetEntity } from './pet.entity';
import { PetRow, rowToPetDto, toPetDto } from './pet.mapper';

/** The query of the page that follows, when one does: the same limit and status, and a cursor. */
export interface NextPageQuery {
  limit: number;
  status?: PetStatus;
  after: string;
}

export interface PetsPage {
  pets: PetDto[];
  next?: NextPageQuery;
}

/**
 * The read path's statements, written once from the entity's metadata (the table and column names stay the
 * entity's): reads skip TypeORM's query builder and entity hydration, which cost more than the query itself.
 */
interface ReadStatements {
  get: string;
  /** By [status filter][after cursor]; the parameters are [status?, afterId?, limit]. */
  list: [[string, string], [string, string]];
}

function readStatements(pets: Repository<PetEntity>): ReadStatements {
  const { metadata } = pets;
  const column = (property: keyof PetEntity) => `"${metadata.findColumnWithPropertyName(property)!.databaseName}"`;
  const [id, name, categoryId, status] = (['id', 'name', 'categoryId', 'status'] as const).map(column);
  const select = `SELECT ${id} AS id, ${name} AS name, ${categoryId} AS category_id, ${status} AS status FROM "${metadata.tableName}"`;
  const list = (byStatus: boolean, after: boolean) => {
    const conditions: string[] = [];
    if (byStatus) conditions.push(`${status} = $1`);
    if (after) conditions.push(`${id} > $${conditions.length + 1}`);
    const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
    return `${select}${where} ORDER BY ${id} ASC LIMIT $${conditions.length + 1}`;
  };
  return {
    get: `${select} WHERE ${id} = $1`,
    list: [
      [list(false, false), list(false, true)],
      [list(true, false), list(true, true)],
    ],
  };
}

@Injectable()
export class PetsService {
  private readonly statements: ReadStatements;

  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly cursors: PageCursorCodec,
  ) {
    this.statements = readStatements(pets);
  }

  /**
   * A page in ascending id order: `WHERE [status = $1 AND] id > $2 ORDER BY id LIMIT n + 1`, a range scan of the
   * (status, id) index or the primary key, so a page deep in the table costs what the first one costs. The
   * extra row only tells whether a next page exists. Paging by id (not by offset) neither skips nor repeats an
   * animal when others are added meanwhile: new ids are greater than every id already read.
   */
  async list(query: ListPetsQueryDto): Promise<PetsPage> {
    const limit = query.limit ?? LIST_LIMIT.default;
    const status = query.status ?? null;
    const afterId = query.after === undefined ? undefined : this.positionAfter(query.after, status);
    const parameters: unknown[] = [];
    if (status) parameters.push(status);
    if (afterId !== undefined) parameters.push(afterId);
    parameters.push(limit + 1);
    const sql = this.statements.list[status ? 1 : 0][afterId === undefined ? 0 : 1];
    const rows: PetRow[] = await this.pets.query(sql, parameters);
    const count = Math.min(rows.length, limit);
    const pets = new Array<PetDto>(count);
    for (let i = 0; i < count; i += 1) pets[i] = rowToPetDto(rows[i]);
    if (rows.length <= limit) return { pets };
    const after = this.cursors.encode({ lastId: pets[pets.length - 1].id, status });
    return { pets, next: { limit, ...(query.status ? { status: query.status } : {}), after } };
  }

  async create(newPet: NewPetDto): Promise<PetDto> {
    const saved = await this.pets.save(
      this.pets.create({ name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? null }),
    );
    return toPetDto(saved);
  }

  async get(id: number): Promise<PetDto> {
    const [row]: PetRow[] = await this.pets.query(this.statements.get, [id]);
    if (!row) throw new ApiError('NOT_FOUND', `No pet with id ${id}.`);
    return rowToPetDto(row);
  }

  /** The id a cursor continues after; 400 when it is not ours, or belongs to a listing with another status. */
  private positionAfter(cursor: string, status: PetStatus | null): number {
    const position = this.cursors.decode(cursor);
    if (!position) {
      throw new ApiError(
        'VALIDATION_FAILED',
        'after is not a valid cursor: use the one in the Link rel="next" header of the previous page, unchanged',
      );
    }
    if (position.status !== status) {
      const issuedFor = position.status ? `status=${position.status}` : 'every status (no status filter)';
      throw new ApiError(
        'VALIDATION_FAILED',
        `after belongs to the listing of ${issuedFor}: keep the status of the page that gave it`,
      );
    }
    return position.lastId;
  }
}
