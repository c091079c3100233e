// A local MCP server that notes every tools/call it receives in COUNT_FILE before
// doing anything, so a test can tell whether the gateway ever sent one call twice; and one that says its credential
// in places other than a content text.
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const secret = process.env.COUNTER_SECRET ?? 'none';
const server = new Server(
  { name: 'counter', version: '1.0.0' },
  { capabilities: { tools: {}, prompts: {}, resources: {} } },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: ['die', 'slow', 'leak', 'ok'].map((name) => ({ name, inputSchema: { type: 'object' } })),
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  appendFileSync(process.env.COUNT_FILE, `${request.params.name} ${process.pid}\n`);
  if (request.params.name === 'die') process.exit(1);
  if (request.params.name === 'slow') await new Promise((resolve) => setTimeout(resolve, 4000));
  if (request.params.name === 'leak')
    return {
      content: [{ type: 'text', text: 'see structured' }],
      structuredContent: { [secret]: true, headers: { [`x-${secret}`]: 1 } },
    };
  return { content: [{ type: 'text', text: `ok ${process.pid}` }] };
});
server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [{ name: 'p' }] }));
server.setRequestHandler(GetPromptRequestSchema, async () => ({
  messages: [{ role: 'user', content: { type: 'text', text: `token ${secret}` } }],
  _meta: { [secret]: 'k' },
}));
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: 'counter://secret', name: 's' }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async () => ({
  contents: [{ uri: 'counter://secret', text: `t ${secret}`, blob: undefined }],
}));
await server.connect(new StdioServerTransport());
