/**
 * Bedrock's Claude answers are Anthropic's Messages shapes from before the API added members that Anthropic's own
 * answers now always carry (null when unused): `container`, `stop_details`, `diagnostics`, the newer usage members,
 * a text block's `citations`, a tool_use block's `caller`. A Messages client of the gateway is promised Anthropic's
 * API, whose SDK types declare them, so the members Bedrock leaves out are added as Anthropic sends them when they
 * do not apply (null; a model's own tool call is `caller: {type: "direct"}`). Nothing Bedrock sent is changed.
 */
type Json = Record<string, unknown>;

const MESSAGE_NULLS = ['container', 'stop_details', 'diagnostics'];
const USAGE_NULLS = [
  'cache_creation',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'inference_geo',
  'output_tokens_details',
  'server_tool_use',
  'service_tier',
  'speed',
];
const DELTA_NULLS = ['container', 'stop_details', 'stop_sequence'];
const DELTA_USAGE_NULLS = [
  'input_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'output_tokens_details',
  'server_tool_use',
];

function fill(target: unknown, names: string[]): void {
  if (!target || typeof target !== 'object') return;
  for (const name of names) if (!(name in target)) (target as Json)[name] = null;
}

function completeBlock(block: unknown): void {
  if (!block || typeof block !== 'object') return;
  const typed = block as Json;
  if (typed.type === 'text' && !('citations' in typed)) typed.citations = null;
  if (typed.type === 'tool_use' && !('caller' in typed)) typed.caller = { type: 'direct' };
}

/** A whole Message (InvokeModel's answer, message_start's message), completed in place. */
export function completeMessage(message: Json): Json {
  fill(message, MESSAGE_NULLS);
  fill(message.usage, USAGE_NULLS);
  if (Array.isArray(message.content)) message.content.forEach(completeBlock);
  return message;
}

/** Whether a stream event of this type may lack members (the others are complete as Bedrock sends them). */
export function mayBeIncomplete(type: unknown): boolean {
  return type === 'message_start' || type === 'content_block_start' || type === 'message_delta';
}

/** One stream event, completed in place. */
export function completeEvent(event: Json): Json {
  if (event.type === 'message_start' && event.message && typeof event.message === 'object')
    completeMessage(event.message as Json);
  else if (event.type === 'content_block_start') completeBlock(event.content_block);
  else if (event.type === 'message_delta') {
    fill(event.delta, DELTA_NULLS);
    fill(event.usage, DELTA_USAGE_NULLS);
  }
  return event;
}
