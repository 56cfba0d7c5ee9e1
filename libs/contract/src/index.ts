export * from './pet-status.enum';
export * from './limits';
export * from './validators';
export * from './pet.dto';
export * from './list-pets.query.dto';
export * from './pet-id.params.dto';
export * from './error.dto';
export * from './validation.pipe';
