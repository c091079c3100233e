import type { GatewayException } from '../../core/errors/gateway.exception';
import type { StreamStep } from '../../providers/provider-adapter';
import type { ChatCompletionChunk } from '../../core/openai-types';
import type { StreamEnd } from '../../streaming/stream-encoder';
import type { SealableEncoder } from './native-responses';
import {
  functionCallItem,
  messageItem,
  newId,
  outputText,
  reasoningItem,
  refusalItem,
  responseError,
  responseUsage,
  statusOf,
  type OutputItem,
  type ResponseEnvelope,
} from './response-object';
import type { ToolNames } from './responses-to-chat';

type ToolCallDelta = { index?: number; id?: string; function?: { name?: string; arguments?: string } };
interface OpenItem {
  kind: 'reasoning' | 'message' | 'refusal' | 'function_call';
  id: string;
  text: string;
  toolIndex?: number;
  callId?: string;
  name?: string;
}

/**
 * OpenAI chunks (from any translated family) -> the Responses API's semantic events, each with its
 * sequence_number, in the order openai-node's stream helper and Codex accept: response.created and
 * .in_progress first; then one output item at a time (added, its parts and deltas, done), reasoning as a
 * summary, text as output_text, each tool call as a function_call item; response.completed (or .incomplete) last,
 * carrying the whole response with every item and the usage. The finished response is kept for storing.
 */
export class ResponsesStreamEncoder implements SealableEncoder {
  private sequence = 0;
  private started = false;
  private open: OpenItem | undefined;
  private readonly output: OutputItem[] = [];
  private finishReason: string | null = null;
  /** The whole response once the stream has ended (completed, incomplete or failed). */
  final?: Record<string, unknown>;
  /** The open item's closing events, made when the response was sealed. */
  private closing = '';

  constructor(
    private readonly envelope: ResponseEnvelope,
    private readonly names: ToolNames,
  ) {}

  event(_event: unknown, step: StreamStep): string {
    let out = this.start();
    for (const chunk of step.chunks) {
      const choice = chunk.choices?.find((c) => c.index === 0);
      if (!choice) continue;
      out += this.delta(choice.delta ?? {});
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  /**
   * Builds the finished response (before its last events are written, so it can be stored first): the open
   * item's closing events are kept for `end`.
   */
  seal(end: StreamEnd & { error?: GatewayException }): void {
    if (this.final) return;
    if (end.error) {
      const body = end.error.toBody().error;
      this.final = this.envelope.build({
        status: 'failed',
        output: this.output,
        usage: null,
        error: responseError(body.code, body.message),
      });
      return;
    }
    this.closing = this.start() + this.close();
    const { status, incomplete_details } = statusOf(this.finishReason);
    this.final = this.envelope.build({
      status,
      incomplete_details,
      output: this.output,
      usage: responseUsage(end.usage),
    });
  }

  end(end: StreamEnd): string {
    this.seal(end);
    const status = this.final!.status;
    return (
      this.closing +
      this.send(status === 'completed' ? 'response.completed' : 'response.incomplete', {
        response: this.final,
      })
    );
  }

  /** A failure after the stream began: response.failed (Codex reads it), then the error event (the SDKs throw on it). */
  error(exception: GatewayException): string {
    const out = this.start();
    const body = exception.toBody().error;
    this.seal({ error: exception });
    // The error both nested (what OpenAI sends, what openai-node and openai-python raise on) and flat (the spec's shape).
    return (
      out +
      this.send('response.failed', { response: this.final }) +
      this.send('error', { error: body, code: body.code, message: body.message, param: body.param })
    );
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = this.envelope.build({ status: 'in_progress', output: [], usage: null });
    return this.send('response.created', { response }) + this.send('response.in_progress', { response });
  }

  private delta(delta: ChatCompletionChunk['choices'][number]['delta']): string {
    let out = '';
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) {
      if (this.open?.kind !== 'reasoning')
        out += this.close() + this.begin({ kind: 'reasoning', id: newId('rs'), text: '' });
      this.open!.text += delta.reasoning_content;
      out += this.send('response.reasoning_summary_text.delta', {
        ...this.where(),
        summary_index: 0,
        delta: delta.reasoning_content,
      });
    }
    if (typeof delta.content === 'string' && delta.content) {
      if (this.open?.kind !== 'message')
        out += this.close() + this.begin({ kind: 'message', id: newId('msg'), text: '' });
      this.open!.text += delta.content;
      out += this.send('response.output_text.delta', {
        ...this.where(),
        content_index: 0,
        delta: delta.content,
        logprobs: [],
      });
    }
    // OpenAI's refusal (delta.refusal) is a message whose part is `refusal`, fed by response.refusal.delta.
    const refusal = (delta as { refusal?: unknown }).refusal;
    if (typeof refusal === 'string' && refusal) {
      if (this.open?.kind !== 'refusal')
        out += this.close() + this.begin({ kind: 'refusal', id: newId('msg'), text: '' });
      this.open!.text += refusal;
      out += this.send('response.refusal.delta', { ...this.where(), content_index: 0, delta: refusal });
    }
    for (const call of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as ToolCallDelta[]) {
      const toolIndex = call.index ?? 0;
      if (this.open?.kind !== 'function_call' || this.open.toolIndex !== toolIndex) {
        out +=
          this.close() +
          this.begin({
            kind: 'function_call',
            id: newId('fc'),
            text: '',
            toolIndex,
            callId: call.id ?? newId('fc'),
            name: call.function?.name ?? '',
          });
      }
      const args = call.function?.arguments;
      if (typeof args === 'string' && args) {
        this.open!.text += args;
        out += this.send('response.function_call_arguments.delta', { ...this.where(), delta: args });
      }
    }
    return out;
  }

  private begin(item: OpenItem): string {
    this.open = item;
    const index = this.output.length;
    if (item.kind === 'reasoning') {
      return (
        this.send('response.output_item.added', {
          output_index: index,
          item: { id: item.id, type: 'reasoning', summary: [] },
        }) +
        this.send('response.reasoning_summary_part.added', {
          ...this.where(),
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        })
      );
    }
    if (item.kind === 'message' || item.kind === 'refusal') {
      const part = item.kind === 'message' ? outputText('') : { type: 'refusal', refusal: '' };
      return (
        this.send('response.output_item.added', {
          output_index: index,
          item: { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        }) + this.send('response.content_part.added', { ...this.where(), content_index: 0, part })
      );
    }
    const added = functionCallItem(item.id, item.callId!, item.name!, '', this.names, 'in_progress');
    return this.send('response.output_item.added', { output_index: index, item: added });
  }

  /** Ends the open item: its .done events, then output_item.done with the whole item (what Codex keeps). */
  private close(): string {
    const item = this.open;
    if (!item) return '';
    this.open = undefined;
    const where = { item_id: item.id, output_index: this.output.length };
    let out = '';
    let done: OutputItem;
    if (item.kind === 'reasoning') {
      const part = { type: 'summary_text', text: item.text };
      out += this.send('response.reasoning_summary_text.done', {
        ...where,
        summary_index: 0,
        text: item.text,
      });
      out += this.send('response.reasoning_summary_part.done', { ...where, summary_index: 0, part });
      done = reasoningItem(item.id, item.text);
    } else if (item.kind === 'message') {
      const part = outputText(item.text);
      out += this.send('response.output_text.done', {
        ...where,
        content_index: 0,
        text: item.text,
        logprobs: [],
      });
      out += this.send('response.content_part.done', { ...where, content_index: 0, part });
      done = messageItem(item.id, item.text);
    } else if (item.kind === 'refusal') {
      const part = { type: 'refusal', refusal: item.text };
      out += this.send('response.refusal.done', { ...where, content_index: 0, refusal: item.text });
      out += this.send('response.content_part.done', { ...where, content_index: 0, part });
      done = refusalItem(item.id, item.text);
    } else {
      done = functionCallItem(item.id, item.callId!, item.name!, item.text, this.names);
      out += this.send('response.function_call_arguments.done', {
        ...where,
        name: done.name,
        arguments: item.text,
      });
    }
    out += this.send('response.output_item.done', { output_index: where.output_index, item: done });
    this.output.push(done);
    return out;
  }

  private where(): { item_id: string; output_index: number } {
    return { item_id: this.open!.id, output_index: this.output.length };
  }

  private send(type: string, data: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`;
  }
}
