import { Global, Module } from '@nestjs/common';
import { PriceBook } from './price-book';

/** Prices (config over the shipped table). Global: usage accounting, admission and metrics all price requests. */
@Global()
@Module({ providers: [PriceBook], exports: [PriceBook] })
export class BillingModule {}
