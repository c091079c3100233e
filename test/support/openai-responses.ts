import type { ServerResponse } from 'node:http';
import { generate, REASONING, requestedToolCall, words, type RecordedRequest } from './standin-server';

/**
 * OpenAI's Responses API as a stand-in serves it (`POST /v1/responses`), written from OpenAI's API reference
 * (../shared/reference/responses-messages-embeddings.md section 1): the `response` object with output items
 * (reasoning, message with output_text, function_call), usage with details, and streams of semantic events
 * (`event:` + `data:` with `sequence_number`, no [DONE]). Like OpenAI with `store: false`, it keeps nothing: a
 * `previous_response_id` is a 400, and a replayed reasoning item must carry its `encrypted_content`.
 *
 * By model: `echo` answers "echo: <last user text>"; `tool-caller` calls the tool the user asked for
 * (`call <Tool> with <JSON>`) or the first function tool with {query}, and after a function_call_output answers
 * "tool said: <output>"; `reasoner` reasons first (a summary; encrypted when `include` asks); `refuser` refuses
 * as OpenAI's models do (a message whose one content part is `refusal`, streamed as response.refusal.delta/.done;
 * the response `completed`); `parallel-caller` with function tools offered calls each (the first twice when only
 * one is offered), every call its own item id and call_id, one output item after another as OpenAI streams them,
 * then after function_call_output items answers as `tool-caller`; `failer` fails after accepting the request, as
 * the Response object allows: HTTP 200 with `status: failed` and `error: {code, message}`, no output (streamed:
 * response.created, response.in_progress, then response.failed). A text answer longer than `max_output_tokens`
 * (a token is a word) is cut there: the message `incomplete`, the response `incomplete` with
 * `incomplete_details.reason: max_output_tokens` (streamed: `response.incomplete` last). Ids of calls made are
 * kept on the recorded request (`toolCallIds`), for tests that follow them through.
 */
export function answerResponses(
  recorded: RecordedRequest,
  res: ServerResponse,
  newId: (prefix: string, length?: number) => string,
): void {
  const body = recorded.body;
  if (typeof body.model !== 'string') return fail(res, 400, "Missing required parameter: 'model'.", 'model');
  if (body.previous_response_id)
    return fail(
      res,
      400,
      `Previous response with id '${body.previous_response_id}' not found.`,
      'previous_response_id',
      'previous_response_not_found',
    );
  const items: Array<Record<string, any>> =
    typeof body.input === 'string'
      ? [{ type: 'message', role: 'user', content: body.input }]
      : (body.input ?? []);
  for (const item of items) {
    if (item.type === 'reasoning' && typeof item.encrypted_content !== 'string') {
      return fail(
        res,
        400,
        `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        'input',
      );
    }
  }
  const calls = new Set(items.filter((i) => i.type === 'function_call').map((i) => i.call_id));
  for (const output of items.filter((i) => i.type === 'function_call_output')) {
    if (!calls.has(output.call_id))
      return fail(
        res,
        400,
        `No tool call found for function call output with call_id ${output.call_id}.`,
        'input',
      );
  }
  const textOf = (content: unknown) =>
    typeof content === 'string'
      ? content
      : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join(' ');
  const lastUser = [...items].reverse().find((i) => (i.type ?? 'message') === 'message' && i.role === 'user');
  const userText = lastUser ? textOf(lastUser.content) : '';
  const last = items[items.length - 1];
  const functionTools = (body.tools ?? []).filter((t: { type: string }) => t.type === 'function');

  const output: Array<Record<string, any>> = [];
  if (body.model === 'reasoner') {
    const include: string[] = body.include ?? [];
    output.push({
      id: 'rs_standin1',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: REASONING }],
      ...(include.includes('reasoning.encrypted_content')
        ? { encrypted_content: 'enc-standin-reasoning' }
        : {}),
    });
  }
  const callsTools = body.model === 'tool-caller' || body.model === 'parallel-caller';
  if (callsTools && last?.type === 'function_call_output') {
    output.push(message(`tool said: ${textOf(last.output)}`));
  } else if (body.model === 'parallel-caller' && functionTools.length) {
    const called: Array<{ name: string }> =
      functionTools.length > 1 ? functionTools : [functionTools[0], functionTools[0]];
    for (const [i, tool] of called.entries())
      output.push({
        id: newId('fc_'),
        type: 'function_call',
        status: 'completed',
        call_id: newId('call_'),
        name: tool.name,
        arguments: JSON.stringify({ query: userText, call: i + 1 }),
      });
  } else if (body.model === 'refuser') {
    output.push({
      ...message(''),
      content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }],
    });
  } else if (body.model === 'failer') {
    // Nothing generated: the failure is in `error`.
  } else if (body.model === 'tool-caller' && functionTools.length) {
    const asked = requestedToolCall(userText);
    output.push({
      id: 'fc_standin1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_resp123',
      name: asked?.name ?? functionTools[0].name,
      arguments: JSON.stringify(asked?.input ?? { query: userText }),
    });
  } else {
    const made = generate(`echo: ${userText}`, { maxTokens: body.max_output_tokens ?? undefined });
    output.push(message(made.text, made.ended === 'max_tokens' ? 'incomplete' : 'completed'));
  }
  const cut = output.some((item) => item.status === 'incomplete');
  const failed = body.model === 'failer';
  recorded.toolCallIds = output.filter((item) => item.type === 'function_call').map((item) => item.call_id);

  const inputTokens =
    items.reduce(
      (n, i) =>
        n + words(i.type === 'function_call_output' ? textOf(i.output) : i.content ? textOf(i.content) : ''),
      0,
    ) + words(String(body.instructions ?? ''));
  const outputTokens = output.reduce(
    (n, i) =>
      n +
      words(
        i.type === 'message'
          ? (i.content[0].text ?? i.content[0].refusal)
          : i.type === 'function_call'
            ? i.arguments
            : i.summary[0].text,
      ),
    0,
  );
  const response = {
    id: newId('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: failed ? 'failed' : cut ? 'incomplete' : 'completed',
    error: failed
      ? { code: 'server_error', message: 'The server had an error while processing your request.' }
      : null,
    incomplete_details: cut ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    model: `${body.model}-2026-01-01`,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    tools: body.tools ?? [],
    tool_choice: body.tool_choice ?? 'auto',
    top_p: body.top_p ?? 1,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: body.model === 'reasoner' ? 3 : 0 },
      total_tokens: inputTokens + outputTokens,
    } as Record<string, unknown> | undefined,
    metadata: body.metadata ?? {},
  };
  // The schema's usage is an object, never null: a response that failed before generating anything has none.
  if (failed) delete response.usage;
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  let sequence = 0;
  const send = (type: string, data: object) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  // No usage while in progress: OpenAI's Response schema has usage as an object, never null.
  const pending: Record<string, unknown> = { ...response, status: 'in_progress', output: [] };
  delete pending.usage;
  send('response.created', { response: pending });
  send('response.in_progress', { response: pending });
  output.forEach((item, index) => {
    const where = { item_id: item.id, output_index: index };
    if (item.type === 'reasoning') {
      send('response.output_item.added', {
        output_index: index,
        item: { id: item.id, type: 'reasoning', summary: [] },
      });
      send('response.reasoning_summary_part.added', {
        ...where,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      send('response.reasoning_summary_text.delta', {
        ...where,
        summary_index: 0,
        delta: item.summary[0].text,
      });
      send('response.reasoning_summary_text.done', {
        ...where,
        summary_index: 0,
        text: item.summary[0].text,
      });
      send('response.reasoning_summary_part.done', { ...where, summary_index: 0, part: item.summary[0] });
    } else if (item.type === 'function_call') {
      send('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      send('response.function_call_arguments.delta', { ...where, delta: item.arguments.slice(0, 4) });
      send('response.function_call_arguments.delta', { ...where, delta: item.arguments.slice(4) });
      send('response.function_call_arguments.done', { ...where, name: item.name, arguments: item.arguments });
    } else if (item.content[0].type === 'refusal') {
      const refusal: string = item.content[0].refusal;
      send('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      send('response.content_part.added', {
        ...where,
        content_index: 0,
        part: { type: 'refusal', refusal: '' },
      });
      for (const word of refusal.split(/(?<= )/))
        send('response.refusal.delta', { ...where, content_index: 0, delta: word });
      send('response.refusal.done', { ...where, content_index: 0, refusal });
      send('response.content_part.done', { ...where, content_index: 0, part: item.content[0] });
    } else {
      const text: string = item.content[0].text;
      send('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      send('response.content_part.added', {
        ...where,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
      for (const word of text.split(/(?<= )/))
        send('response.output_text.delta', { ...where, content_index: 0, delta: word, logprobs: [] });
      send('response.output_text.done', { ...where, content_index: 0, text, logprobs: [] });
      send('response.content_part.done', { ...where, content_index: 0, part: item.content[0] });
    }
    send('response.output_item.done', { output_index: index, item });
  });
  send(failed ? 'response.failed' : cut ? 'response.incomplete' : 'response.completed', { response });
  res.end();
}

function message(text: string, status = 'completed'): Record<string, any> {
  return {
    id: 'msg_standin1',
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

function fail(
  res: ServerResponse,
  status: number,
  message: string,
  param: string,
  code: string | null = null,
): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } }));
}
