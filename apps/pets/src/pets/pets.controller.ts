import { ListPetsQueryDto, NewPetDto, PetDto, PetIdParamsDto } from '@app/contract';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { nextPageLink } from './next-page-link';
import { PetsService } from './pets.service';

/** Internal API of the pets service; the gateway is its only intended client. */
@Controller('pets')
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  /** The body stays a bare array of Pet (the spec's schema); the next page, when there is one, is in `Link`. */
  @Get()
  async list(
    @Query() query: ListPetsQueryDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PetDto[]> {
    const page = await this.pets.list(query);
    if (page.next) response.setHeader('Link', nextPageLink(request.path, page.next));
    return page.pets;
  }

  /** 201 with `Location: /pets/{id}` (the gateway gives clients its public path). */
  @Post()
  @HttpCode(201)
  async create(@Body() newPet: NewPetDto, @Res({ passthrough: true }) response: Response): Promise<PetDto> {
    const pet = await this.pets.create(newPet);
    response.setHeader('Location', `/pets/${pet.id}`);
    return pet;
  }

  @Get(':petId')
  get(@Param() params: PetIdParamsDto): Promise<PetDto> {
    return this.pets.get(params.petId);
  }
}
