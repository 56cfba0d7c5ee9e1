/** Availability status of an animal (spec 2.4). */
export enum PetStatus {
  Available = 'available',
  Pending = 'pending',
  Sold = 'sold',
}

export const PET_STATUS_VALUES = Object.values(PetStatus);
