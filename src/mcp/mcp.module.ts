import { Module } from '@nestjs/common';
import { LimitsModule } from '../limits/limits.module';
import { RequestLogModule } from '../request-log/request-log.module';
import { McpCallLog } from './mcp-call-log';
import { McpController, ProtectedResourceController } from './mcp.controller';
import { McpGatewayServers } from './mcp-gateway-server';
import { McpServersController } from './mcp-servers.controller';
import { MCP_SESSION_RECORDS } from './mcp-session-records.repository';
import { McpSessions } from './mcp-sessions';
import { McpUpstreams } from './mcp-upstreams';
import { RedisMcpSessionRecords } from './redis-mcp-session-records.repository';

/** Tools through the gateway (docs/mcp.md): the /mcp endpoint in front of the configured MCP servers. */
@Module({
  imports: [LimitsModule, RequestLogModule],
  controllers: [McpController, ProtectedResourceController, McpServersController],
  providers: [
    McpUpstreams,
    McpGatewayServers,
    McpCallLog,
    McpSessions,
    { provide: MCP_SESSION_RECORDS, useClass: RedisMcpSessionRecords },
  ],
  exports: [McpUpstreams],
})
export class McpModule {}
