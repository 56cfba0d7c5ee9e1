import { ListPetsQueryDto, NewPetDto, PetDto, PetIdParamsDto } from '@app/contract';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { PetsService } from './pets.service';

/** Internal API of the pets service; the gateway is its only intended client. */
@Controller('pets')
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  @Get()
  list(@Query() query: ListPetsQueryDto): Promise<PetDto[]> {
    return this.pets.list(query);
  }

  @Post()
  @HttpCode(201)
  create(@Body() newPet: NewPetDto): Promise<PetDto> {
    return this.pets.create(newPet);
  }

  @Get(':petId')
  get(@Param() params: PetIdParamsDto): Promise<PetDto> {
    return this.pets.get(params.petId);
  }
}
