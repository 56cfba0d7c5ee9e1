import { LIST_LIMIT, ListPetsQueryDto, NewPetDto, PetDto } from '@app/contract';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PetEntity } from './pet.entity';
import { toPetDto } from './pet.mapper';

@Injectable()
export class PetsService {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  /** Ascending id; with a status filter the (status, id) index serves it without sorting or counting. */
  async list(query: ListPetsQueryDto): Promise<PetDto[]> {
    const rows = await this.pets.find({
      where: query.status ? { status: query.status } : {},
      order: { id: 'ASC' },
      take: query.limit ?? LIST_LIMIT.default,
    });
    return rows.map(toPetDto);
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
}
