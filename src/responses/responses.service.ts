import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { GatewayException } from '../common/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { ChatService } from '../chat/chat.service';
import type { ClientWire } from '../chat/client-wire';
import type { RequestLedger } from '../usage/request-ledger';
import { chatToResponse } from './chat-to-response';
import { itemsOf, type InputItem } from './dto/response-items';
import type { ResponsesRequestDto } from './dto/responses-request.dto';
import { ResponseEnvelope, type OutputItem } from './response-object';
import { ResponseStore, withIds, type StoredResponse } from './response-store';
import { responsesToChat, type TranslatedRequest } from './responses-to-chat';
import { ResponsesStreamEncoder } from './responses-stream-encoder';

/**
 * OpenAI's Responses API on the chat pipeline (ChatService: routing, deployments, fallbacks, admission,
 * accounting): the request (after the stored conversation it continues) is translated to chat and the answer
 * back, as a Response or its semantic stream events; `store` keeps it for GET and `previous_response_id`.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly chat: ChatService,
    private readonly store: ResponseStore,
    private readonly logger: AppLogger,
  ) {}

  /** Streams to `res`, or returns the Response for a non-streaming request. */
  async create(dto: ResponsesRequestDto, ledger: RequestLedger, res: ServerResponse, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const team = ledger.principal!.teamId;
    const history = dto.previous_response_id ? (await this.previous(team, dto.previous_response_id)).conversation : [];
    const input = withIds(itemsOf(dto.input));
    const translated = responsesToChat(dto, [...(history as InputItem[]), ...input]);
    if (translated.droppedTools.length) res.setHeader('x-switchyard-dropped-tools', translated.droppedTools.join(','));
    const envelope = new ResponseEnvelope(dto);
    const keep = (response: Record<string, unknown>) => (dto.store === false ? Promise.resolve() : this.save(team, response, input, history));

    const wire = this.wire(envelope, translated, keep);
    if (dto.stream === true) {
      await this.chat.stream(translated.chat, wire, ledger, res, signal);
      return undefined;
    }
    const { completion } = await this.chat.complete(translated.chat, wire, ledger, res, signal);
    const response = chatToResponse(completion, envelope, translated.toolNames);
    await keep(response);
    return response;
  }

  async retrieve(team: string, id: string): Promise<Record<string, unknown>> {
    return (await this.stored(team, id)).response;
  }

  async inputItems(team: string, id: string): Promise<Array<InputItem & { id: string }>> {
    return (await this.stored(team, id)).input;
  }

  async delete(team: string, id: string): Promise<void> {
    if (!(await this.store.delete(team, id))) throw notFound(id);
  }

  private wire(envelope: ResponseEnvelope, translated: TranslatedRequest, keep: (response: Record<string, unknown>) => Promise<void>): ClientWire {
    let encoder: ResponsesStreamEncoder | undefined;
    return {
      streamEncoder: () => (encoder = new ResponsesStreamEncoder(envelope, translated.toolNames)),
      thinkingIsAHint: true, // Codex sends reasoning settings to every model
      // Stored before response.completed goes out: a client may continue the moment it has it.
      beforeStreamEnd: async (outcome) => {
        if (!encoder || outcome.aborted) return;
        encoder.seal({ usage: outcome.usage, error: outcome.error });
        if (encoder.final) await keep(encoder.final);
      },
    };
  }

  private async save(team: string, response: Record<string, unknown>, input: StoredResponse['input'], history: StoredResponse['conversation']): Promise<void> {
    const conversation = [...history, ...input, ...(response.output as OutputItem[])];
    try {
      await this.store.save(team, { response, input, conversation });
    } catch (error) {
      // The answer is still the client's; only retrieving or continuing it later will fail (a 404 then).
      this.logger.pino.warn({ err: error, responseId: response.id }, 'could not store the response');
    }
  }

  private async previous(team: string, id: string): Promise<StoredResponse> {
    const stored = await this.store.load(team, id);
    if (!stored) {
      throw new GatewayException('previous_response_not_found', `Previous response with id '${id}' not found.`, { param: 'previous_response_id' });
    }
    return stored;
  }

  private async stored(team: string, id: string): Promise<StoredResponse> {
    const stored = await this.store.load(team, id);
    if (!stored) throw notFound(id);
    return stored;
  }
}

function notFound(id: string): GatewayException {
  return new GatewayException('response_not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
}
