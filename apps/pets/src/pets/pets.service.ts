import { LIST_LIMIT, ListPetsQueryDto, NewPetDto, PetDto, PetStatus } from '@app/contract';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { FindOptionsWhere, MoreThan, Repository } from 'typeorm';
import { PageCursorCodec } from './page-cursor';
import { PetEntity } from './pet.entity';
import { toPetDto } from './pet.mapper';

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

@Injectable()
export class PetsService {
  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly cursors: PageCursorCodec,
  ) {}

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
    const where: FindOptionsWhere<PetEntity> = {};
    if (status) where.status = status;
    if (afterId !== undefined) where.id = MoreThan(afterId);
    const rows = await this.pets.find({ where, order: { id: 'ASC' }, take: limit + 1 });
    const pets = rows.slice(0, limit).map(toPetDto);
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
    const pet = await this.pets.findOneBy({ id });
    if (!pet) throw new ApiError('NOT_FOUND', `No pet with id ${id}.`);
    return toPetDto(pet);
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
