import type { GatewayException } from '../../core/errors/gateway.exception';
import type { SseEvent } from '../../core/sse';
import { speaksNatively } from '../../providers/provider-adapter';
import type { Deployment } from '../../routing/model-router.service';
import type { StreamEncoder, StreamEnd } from '../../streaming/stream-encoder';
import { itemsOf, type InputItem } from './dto/response-items';
import type { ResponsesRequestDto } from './dto/responses-request.dto';
import type { OutputItem } from './response-object';

/** A stream encoder whose finished response can be taken (to store it) before its last events are written. */
export interface SealableEncoder extends StreamEncoder {
  seal(end: StreamEnd & { error?: GatewayException }): void;
  final?: Record<string, unknown>;
}

/**
 * The deployment serves the Responses API itself (an openai backend with `responsesApi: true`, Azure's v1): its
 * backend's adapter lists it and, where that differs by model, takes it for this upstream model.
 */
export function speaksResponses(deployment: Deployment): boolean {
  return speaksNatively(deployment.backend.adapter, 'responses', deployment.upstreamModel);
}

/**
 * The client's request for a Responses-capable backend. The gateway keeps the conversation state for every
 * backend (so a fallback of another family can continue it), so the backend gets the whole conversation as
 * input and `store: false`, with encrypted reasoning included so reasoning items can be replayed statelessly.
 * Replayed items lose their ids (the backend stored none of them) and reasoning items it did not encrypt (another
 * family's, which it could not read) are left out.
 */
export function nativeResponsesBody(
  dto: ResponsesRequestDto,
  history: Array<InputItem | OutputItem>,
  upstreamModel: string,
): string {
  const body: Record<string, unknown> = { ...dto, model: upstreamModel, store: false };
  delete body.previous_response_id;
  if (history.length) body.input = [...history.flatMap(replayable), ...itemsOf(dto.input)];
  if (dto.store !== false)
    body.include = [...new Set([...(dto.include ?? []), 'reasoning.encrypted_content'])];
  return JSON.stringify(body);
}

function replayable(item: InputItem | OutputItem): Array<Record<string, unknown>> {
  const record = item as Record<string, unknown>;
  if (record.type === 'reasoning') return typeof record.encrypted_content === 'string' ? [record] : [];
  const rest = { ...record };
  delete rest.id;
  return [rest];
}

const RESPONSE_EVENTS = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/**
 * A Responses-capable backend's stream to the client: every event as it came, except the events that carry the
 * whole `response`, where the model name, `store` and `previous_response_id` are the client's (the backend saw
 * the gateway's request). The terminal event's response is kept for storing.
 */
export class NativeResponsesEncoder implements SealableEncoder {
  final?: Record<string, unknown>;
  private relayed = 0;
  private responseId?: string;

  constructor(
    private readonly asClientSees: (response: Record<string, unknown>) => void,
    private readonly failed: (id: string | undefined, error: GatewayException) => Record<string, unknown>,
  ) {}

  event(event: SseEvent): string {
    this.relayed++;
    const name = event.event ?? 'message';
    if (!RESPONSE_EVENTS.has(name)) return `event: ${name}\ndata: ${event.data}\n\n`;
    const data = JSON.parse(event.data) as { response?: Record<string, unknown> };
    if (data.response) {
      this.asClientSees(data.response);
      this.responseId = String(data.response.id);
      if (name === 'response.completed' || name === 'response.incomplete') this.final = data.response;
    }
    return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  seal(end: StreamEnd & { error?: GatewayException }): void {
    if (!this.final && end.error) this.final = this.failed(this.responseId, end.error);
  }

  end(): string {
    return ''; // the backend's terminal event was the last one relayed
  }

  error(exception: GatewayException): string {
    this.seal({ error: exception });
    const body = exception.toBody().error;
    const send = (type: string, data: object) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.relayed++, ...data })}\n\n`;
    return (
      send('response.failed', { response: this.final }) +
      send('error', { error: body, code: body.code, message: body.message, param: body.param })
    );
  }
}
