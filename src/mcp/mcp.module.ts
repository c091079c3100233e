import { Module } from '@nestjs/common';
import { LimitsModule } from '../limits/limits.module';
import { RequestLogModule } from '../request-log/request-log.module';
import { McpCallLog } from './mcp-call-log';
import { McpController, ProtectedResourceController } from './mcp.controller';
import { McpGatewayServers } from './mcp-gateway-server';
import { McpServersController } from './mcp-servers.controller';
import { McpUpstreams } from './mcp-upstreams';

/** Tools through the gateway (docs/mcp.md): the /mcp endpoint in front of the configured MCP servers. */
@Module({
  imports: [LimitsModule, RequestLogModule],
  controllers: [McpController, ProtectedResourceController, McpServersController],
  providers: [McpUpstreams, McpGatewayServers, McpCallLog],
  exports: [McpUpstreams],
})
export class McpModule {}
