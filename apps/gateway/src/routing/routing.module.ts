import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RouteTable } from './route-table';

@Module({ imports: [DiscoveryModule], providers: [RouteTable], exports: [RouteTable] })
export class RoutingModule {}
