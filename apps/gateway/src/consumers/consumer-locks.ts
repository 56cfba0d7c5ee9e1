import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminActor } from '../access/admin-context';
import { assertMayTouch } from '../access/admin-policy';
import { ConsumerEntity } from './consumer.entity';
import { ConsumerRepository } from './consumer.repository';

/**
 * The one way a use case changes a consumer: in one transaction under the consumer's row lock (so the changes of
 * one consumer happen one at a time, whichever instance makes them: a rotation racing a revoke-all cannot leave a
 * key behind), 404 when it is unknown, 403 when the actor may not touch it.
 */
@Injectable()
export class ConsumerLocks {
  constructor(private readonly repository: ConsumerRepository) {}

  static unknown(name: string): ApiError {
    return new ApiError('NOT_FOUND', `No consumer named "${name}".`);
  }

  change<T>(
    actor: AdminActor,
    name: string,
    work: (manager: EntityManager, consumer: ConsumerEntity) => Promise<T>,
  ): Promise<T> {
    return this.repository.withLockedConsumer(name, async (manager, consumer) => {
      if (!consumer) throw ConsumerLocks.unknown(name);
      assertMayTouch(actor, consumer);
      return work(manager, consumer);
    });
  }
}
