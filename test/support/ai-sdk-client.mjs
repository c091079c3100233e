// The Vercel AI SDK's default OpenAI provider (`openai('<model>')`, which speaks the Responses API), unmodified,
// run as its own process (the SDK is ESM-only; Jest's module system is not). Prints one JSON result.
//   node ai-sdk-client.mjs <baseURL> <apiKey> <generate|stream|tool> <model> <prompt>
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';

const [baseURL, apiKey, scenario, model, prompt] = process.argv.slice(2);
const openai = createOpenAI({ baseURL, apiKey });

const weather = tool({
  description: 'Weather for a city',
  inputSchema: jsonSchema({
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
    additionalProperties: false,
  }),
  execute: async ({ query }) => `sunny in ${query}`,
});

let result;
if (scenario === 'generate') {
  const { text, usage, finishReason, response } = await generateText({ model: openai(model), prompt });
  result = { text, usage, finishReason, id: response.id };
} else if (scenario === 'stream') {
  const stream = streamText({ model: openai(model), prompt });
  let text = '';
  let chunks = 0;
  for await (const delta of stream.textStream) {
    text += delta;
    chunks++;
  }
  result = { text, chunks, usage: await stream.usage, finishReason: await stream.finishReason };
} else if (scenario === 'tool') {
  const { text, steps, usage } = await generateText({
    model: openai(model),
    prompt,
    tools: { get_weather: weather },
    stopWhen: stepCountIs(3),
  });
  result = {
    text,
    steps: steps.map((step) => ({
      toolCalls: step.toolCalls.map((c) => ({ name: c.toolName, input: c.input })),
      toolResults: step.toolResults.map((r) => r.output),
      finishReason: step.finishReason,
    })),
    usage,
  };
} else throw new Error(`unknown scenario ${scenario}`);
process.stdout.write(JSON.stringify(result));
