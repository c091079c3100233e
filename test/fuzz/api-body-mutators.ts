/**
 * Seeded mutation fuzzers for the other client APIs: Anthropic's Messages (POST /v1/messages and its
 * count_tokens), OpenAI's Responses and embeddings. Each starts from a valid request of its API and breaks it as
 * body-mutator.ts describes, with the API's own structures: content blocks, input items, token arrays.
 */
import { BodyMutator, NOT_OBJECTS } from './body-mutator';

const MESSAGES_FIELDS = [
  'model',
  'messages',
  'max_tokens',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'metadata',
  'output_config',
];
const BLOCK_TYPES = [
  'text',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'search_result',
  '',
];

/** Anthropic Messages bodies; models `echo` (translated to chat) and `claude-echo` (sent natively to Anthropic). */
export class MessagesBodyMutator extends BodyMutator {
  protected base(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.model(['echo', 'echo', 'claude-echo', 'claude-echo', 'nope', '']),
      max_tokens: 1 + this.int(64),
      messages: [
        {
          role: 'user',
          content: this.random() < 0.5 ? this.text(40) : [{ type: 'text', text: this.text(40) }],
        },
      ],
    };
    if (this.random() < 0.2) body.stream = true;
    if (this.random() < 0.2)
      body.system = this.random() < 0.5 ? this.text(40) : [{ type: 'text', text: this.text(40) }];
    return body;
  }

  protected mutate(body: Record<string, unknown>): void {
    const choice = this.int(12);
    const field = this.pick(MESSAGES_FIELDS);
    if (choice === 0) body[field] = this.value(0);
    else if (choice === 1) delete body[field];
    else if (choice === 2) this.protoKey(body);
    else if (choice === 3) body.messages = Array.from({ length: this.int(5) }, () => this.message());
    else if (choice === 4) body[field] = this.nested(1 + this.int(200));
    else if (choice === 5) body[this.text(12)] = this.value(0);
    else if (choice === 6)
      body.messages = stray(
        Array.isArray(body.messages) ? body.messages : [],
        this.pick(NOT_OBJECTS),
        this.int(3),
      );
    else if (choice === 7)
      body[field] = this.pick([1e308, -0, 2 ** 53 + 1, -1, 0, 0.5, 1024, 1e-300, Number.MAX_SAFE_INTEGER]);
    else if (choice === 8) body.tools = Array.from({ length: this.int(4) }, () => this.tool());
    else if (choice === 9)
      body.tool_choice = this.maybe([
        { type: 'auto' },
        { type: 'any' },
        { type: 'none' },
        { type: 'tool', name: 'f' },
        { type: 'tool' },
        { type: 'auto', disable_parallel_tool_use: this.value(1) },
        'auto',
      ]);
    else if (choice === 10) {
      body.thinking = this.maybe([
        { type: 'enabled', budget_tokens: this.pick([1024, 1, 100_000]) },
        { type: 'adaptive' },
        { type: 'disabled' },
        { type: 'enabled' },
        { type: 'other' },
      ]);
      if (this.random() < 0.5)
        body.output_config = this.maybe([{ effort: 'low' }, { effort: 'max' }, { effort: 5 }, {}]);
    } else
      body.system = this.maybe([[{ type: 'text', text: 'x' }], [{ type: 'image' }], [[]], [null], 'sys', []]);
  }

  protected duplicatePrefix(): Record<string, unknown> {
    return { model: this.pick(['echo', 123, null]), messages: this.value(1), max_tokens: this.value(1) };
  }

  private message(): unknown {
    if (this.random() < 0.1) return this.pick(NOT_OBJECTS);
    const content =
      this.random() < 0.3 ? this.value(0) : Array.from({ length: this.int(4) }, () => this.block(0));
    return { role: this.maybe(['user', 'assistant', 'user', 'system', 'robot']), content };
  }

  private block(depth: number): unknown {
    if (this.random() < 0.1) return this.pick(NOT_OBJECTS);
    const type = this.pick(BLOCK_TYPES);
    const block: Record<string, unknown> = { type };
    switch (type) {
      case 'text':
        block.text = this.maybe([this.text(30), '']);
        break;
      case 'image':
      case 'document':
        block.source = this.maybe([
          { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'url', url: 'https://example.com/a.png' },
          { type: 'text', media_type: 'text/plain', data: this.text(20) },
          { type: 'content', content: depth < 2 ? [this.block(depth + 1)] : [] },
          { type: 'file', file_id: 'file_1' },
          { type: 'base64' },
        ]);
        if (type === 'document' && this.random() < 0.5) block.title = this.value(1);
        break;
      case 'tool_use':
      case 'server_tool_use':
        block.id = this.maybe(['toolu_1', 'toolu_2']);
        block.name = this.maybe(['f', 'web_search']);
        block.input = this.maybe([{ q: 'x' }, {}, { deep: this.nested(this.int(20)) }]);
        break;
      case 'tool_result':
        block.tool_use_id = this.maybe(['toolu_1', 'toolu_2']);
        if (this.random() < 0.7)
          block.content = this.maybe([
            'result',
            [],
            [[]],
            depth < 2 ? [this.block(depth + 1), this.block(depth + 1)] : [{ type: 'text', text: 'r' }],
          ]);
        if (this.random() < 0.3) block.is_error = this.value(1);
        break;
      case 'thinking':
        block.thinking = this.maybe(['hmm']);
        block.signature = this.maybe(['switchyard:abc', 'sig-x', 'bad']);
        break;
      case 'redacted_thinking':
        block.data = this.maybe(['opaque']);
        break;
      default:
        block[this.text(6)] = this.value(1);
    }
    if (this.random() < 0.1) block.cache_control = this.maybe([{ type: 'ephemeral' }]);
    return block;
  }

  private tool(): unknown {
    if (this.random() < 0.15) return this.pick(NOT_OBJECTS);
    return this.maybe([
      {
        name: 'f',
        description: 'a function',
        input_schema: { type: 'object', properties: { q: { type: 'string' } } },
      },
      { name: 'f', input_schema: this.nested(this.int(30)) },
      { name: 'f' },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      { type: 'custom', name: 'g', input_schema: {} },
      { name: '', input_schema: {} },
    ]);
  }
}

const RESPONSES_FIELDS = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'reasoning',
  'text',
  'previous_response_id',
  'store',
  'stream',
  'metadata',
  'user',
  'include',
];
const ITEM_TYPES = [
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'computer_call',
  undefined,
];

/** OpenAI Responses bodies; the model `echo` is translated to chat. */
export class ResponsesBodyMutator extends BodyMutator {
  protected base(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.model(['echo', 'echo', 'echo', 'nope', '']),
      input:
        this.random() < 0.4
          ? this.text(40)
          : [
              {
                role: 'user',
                content: this.random() < 0.5 ? this.text(40) : [{ type: 'input_text', text: this.text(40) }],
              },
            ],
      // Mostly not stored: the fuzzer would otherwise fill Redis for 30 days (its key prefix is deleted afterwards).
      store: this.random() < 0.2,
    };
    if (this.random() < 0.2) body.stream = true;
    if (this.random() < 0.2) body.instructions = this.text(30);
    return body;
  }

  protected mutate(body: Record<string, unknown>): void {
    const choice = this.int(12);
    const field = this.pick(RESPONSES_FIELDS);
    if (choice === 0) body[field] = this.value(0);
    else if (choice === 1) delete body[field];
    else if (choice === 2) this.protoKey(body);
    else if (choice === 3) body.input = Array.from({ length: this.int(5) }, () => this.item());
    else if (choice === 4) body[field] = this.nested(1 + this.int(200));
    else if (choice === 5) body[this.text(12)] = this.value(0);
    else if (choice === 6)
      body.input = stray(Array.isArray(body.input) ? body.input : [], this.pick(NOT_OBJECTS), this.int(3));
    else if (choice === 7)
      body[field] = this.pick([1e308, -0, 2 ** 53 + 1, -1, 0, 0.5, 16, 1e-300, Number.MAX_SAFE_INTEGER]);
    else if (choice === 8) body.tools = Array.from({ length: this.int(4) }, () => this.tool());
    else if (choice === 9)
      body.tool_choice = this.maybe([
        'auto',
        'none',
        'required',
        { type: 'function', name: 'f' },
        { type: 'function', name: 'f', namespace: 'ns' },
        { type: 'allowed_tools' },
        'sometimes',
      ]);
    else if (choice === 10)
      body.reasoning = this.maybe([
        { effort: 'high' },
        { effort: 'none' },
        { effort: 'xhigh', summary: 'auto' },
        { effort: 'extreme' },
        { summary: 5 },
        {},
      ]);
    else if (choice === 11)
      body.text = this.maybe([
        { format: { type: 'json_object' } },
        { format: { type: 'json_schema', name: 's', schema: this.nested(this.int(20)), strict: true } },
        { format: { type: 'text' } },
        { format: 5 },
      ]);
    else
      body.previous_response_id = this.maybe(['resp_0123456789abcdef0123456789abcdef0123456789abcdef', '']);
  }

  protected duplicatePrefix(): Record<string, unknown> {
    return { model: this.pick(['echo', 123, null]), input: this.value(1) };
  }

  private item(): unknown {
    if (this.random() < 0.1) return this.pick(NOT_OBJECTS);
    const type = this.pick(ITEM_TYPES);
    const item: Record<string, unknown> = type === undefined ? {} : { type };
    if (type === 'message' || type === undefined) {
      item.role = this.maybe(['user', 'assistant', 'system', 'developer', 'tool']);
      item.content =
        this.random() < 0.3 ? this.value(0) : Array.from({ length: this.int(3) }, () => this.part());
    } else if (type === 'function_call') {
      item.call_id = this.maybe(['call_1', 'call_2']);
      item.name = this.maybe(['f', 'ns__g']);
      item.arguments = this.maybe(['{}', '{"q":1}', 'not json']);
      if (this.random() < 0.3) item.namespace = this.maybe(['ns']);
    } else if (type === 'function_call_output') {
      item.call_id = this.maybe(['call_1', 'call_2']);
      item.output = this.maybe(['ok', [{ type: 'input_text', text: 'ok' }], [[]], []]);
    } else if (type === 'reasoning') {
      item.id = 'rs_1';
      item.summary = this.maybe([[{ type: 'summary_text', text: 'x' }], [], [[]]]);
      if (this.random() < 0.3) item.encrypted_content = this.value(1);
    } else item[this.text(6)] = this.value(1);
    return item;
  }

  private part(): unknown {
    if (this.random() < 0.1) return this.pick(NOT_OBJECTS);
    return this.maybe([
      { type: 'input_text', text: this.text(20) },
      { type: 'output_text', text: this.text(20) },
      { type: 'input_text' },
      { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
      { type: 'input_image', file_id: 'file_1' },
      { type: 'input_file', file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' },
      { type: 'input_file', file_url: 'https://example.com/a.pdf' },
      { type: 'refusal', refusal: 'no' },
      { type: 'input_audio' },
    ]);
  }

  private tool(): unknown {
    if (this.random() < 0.15) return this.pick(NOT_OBJECTS);
    return this.maybe([
      { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } },
      { type: 'function', name: 'f', parameters: this.nested(this.int(30)), strict: true },
      { type: 'function' },
      {
        type: 'namespace',
        name: 'ns',
        tools: [{ type: 'function', name: 'g' }, { type: 'web_search' }, null, []],
      },
      { type: 'namespace', name: 'ns' },
      { type: 'web_search' },
      { type: 'local_shell' },
      { name: 'f' },
    ]);
  }
}

/** OpenAI embeddings bodies; `embed` is an embedding model, `echo` a chat model (a 400 that says so). */
export class EmbeddingsBodyMutator extends BodyMutator {
  protected base(): Record<string, unknown> {
    return {
      model: this.model(['embed', 'embed', 'embed', 'echo', 'nope', '']),
      input: this.random() < 0.5 ? this.text(40) || 'x' : [this.text(20) || 'x', this.text(20) || 'y'],
    };
  }

  protected mutate(body: Record<string, unknown>): void {
    const choice = this.int(9);
    const field = this.pick(['model', 'input', 'encoding_format', 'dimensions', 'user']);
    if (choice === 0) body[field] = this.value(0);
    else if (choice === 1) delete body[field];
    else if (choice === 2) this.protoKey(body);
    else if (choice === 3) body.input = this.input();
    else if (choice === 4) body[field] = this.nested(1 + this.int(200));
    else if (choice === 5) body[this.text(12)] = this.value(0);
    else if (choice === 6) body.encoding_format = this.maybe(['float', 'base64', 'hex']);
    else if (choice === 7) body.dimensions = this.maybe([8, 1, 0, -1, 1.5, 3072, 2 ** 40]);
    else body[field] = this.pick([1e308, -0, 2 ** 53 + 1, -1, 0, 0.5, 1e-300, Number.MAX_SAFE_INTEGER]);
  }

  protected duplicatePrefix(): Record<string, unknown> {
    return { model: this.pick(['embed', 123, null]), input: this.value(1) };
  }

  private input(): unknown {
    const tokens = () => Array.from({ length: this.int(20) }, () => this.maybe([1, 42, 100_000, 0], 10));
    return this.pick<() => unknown>([
      () => this.text(100),
      () => Array.from({ length: this.int(5) }, () => this.text(30)),
      () => tokens(),
      () => Array.from({ length: this.int(5) }, tokens),
      () => [[]],
      () => stray([this.text(10)], this.pick(NOT_OBJECTS), 0),
      () => [1, 'a', [2]],
      () => Array.from({ length: 2049 }, () => 'x'),
      () => [-1, 1.5, 2 ** 53],
      () => this.value(0),
    ])();
  }
}

/** `items` with `stray` put in at a random place (`at`: 0 first, 1 last, 2 middle). */
function stray(items: unknown[], strayItem: unknown, at: number): unknown[] {
  const out = [...items];
  out.splice(at === 0 ? 0 : at === 1 ? out.length : Math.floor(out.length / 2), 0, strayItem);
  return out;
}
