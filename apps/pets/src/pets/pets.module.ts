import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PETS_CONFIG, PetsConfig } from '../config/pets.config';
import { DEVELOPMENT_CURSOR_SECRET, PageCursorCodec } from './page-cursor';
import { PetEntity } from './pet.entity';
import { PetsController } from './pets.controller';
import { PetsService } from './pets.service';

@Module({
  imports: [TypeOrmModule.forFeature([PetEntity])],
  controllers: [PetsController],
  providers: [
    PetsService,
    {
      provide: PageCursorCodec,
      inject: [PETS_CONFIG],
      useFactory: (config: PetsConfig) => new PageCursorCodec(config.cursorSecret ?? DEVELOPMENT_CURSOR_SECRET),
    },
  ],
})
export class PetsModule {}
