import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { GatewayException } from '../../core/errors/gateway.exception';
import { bodyValues, isPacedBody, MAX_BODY_VALUES, nextTurn } from '../../common/http/json-shape';
import { AppLogger } from '../../common/logging/logger';
import type { ChatServed, ClientCall, EndpointRoute, EndpointSpec } from '../../gateway/endpoint-spec';
import { openAiErrors } from '../../core/errors/error-shape';
import type { ClientWire } from '../../gateway/client-wire';
import { chatToResponse } from './chat-to-response';
import type { InputItem } from './dto/response-items';
import type { ResponsesRequestDto } from './dto/responses-request.dto';
import { ResponseEnvelope, responseError } from './response-object';
import { ResponseStore, storedInput, type StoredResponse } from './response-store';
import { responsesToChat, type TranslatedRequest } from './responses-to-chat';
import { ResponsesStreamEncoder } from './responses-stream-encoder';
import {
  nativeResponsesBody,
  NativeResponsesEncoder,
  speaksResponses,
  type SealableEncoder,
} from './native-responses';
import { backendSecrets, scrub } from '../../providers/upstream-errors';
import { GatewayConfig } from '../../config/config.schema';

/** POST /v1/responses; GET and DELETE /v1/responses/{id} answer errors alike. */
export const responsesRoute: EndpointRoute = {
  path: '/v1/responses',
  billedAs: 'responses',
  errors: openAiErrors,
  keepsClientBytes: false,
};

/**
 * OpenAI's Responses API on the chat pipeline (gateway/pipeline.ts: routing, deployments, fallbacks, admission,
 * accounting): the request (after the stored conversation it continues) is translated to chat and the answer
 * back, as a Response or its semantic stream events; `store` keeps it for GET and `previous_response_id`.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly store: ResponseStore,
    private readonly logger: AppLogger,
    private readonly config: GatewayConfig,
  ) {}

  /** POST /v1/responses as the pipeline serves it (its store is this service's). */
  readonly endpoint: EndpointSpec<ResponsesRequestDto> = {
    ...responsesRoute,
    open: (dto, client) => this.open(dto, client),
  };

  /** The request after the stored conversation it continues, translated to chat; the answer stored unless `store: false`. */
  private async open(dto: ResponsesRequestDto, client: ClientCall): Promise<ChatServed> {
    const team = client.caller.teamId;
    const previous = dto.previous_response_id
      ? await this.previous(team, dto.previous_response_id)
      : undefined;
    const history = previous?.conversation ?? [];
    // A continued conversation is bounded as one request body is: it is loaded, translated and stored whole.
    const values = (previous?.values ?? 0) + bodyValues(dto);
    if (previous && values > MAX_BODY_VALUES) {
      throw new GatewayException(
        'invalid_request',
        `The conversation of previous_response_id would hold more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON objects, arrays and strings, the gateway's limit for a request body and a stored conversation alike. Start a new conversation, or send its items as input with store: false.`,
        { param: 'previous_response_id', wireCode: null },
      );
    }
    const paced = isPacedBody(dto) || history.length > 1000;
    const input = storedInput(dto.input);
    if (paced) await nextTurn(); // each pass over a big input on a turn of its own (json-shape.ts)
    const translated = responsesToChat(dto, [...(history as InputItem[]), ...input]);
    if (paced) await nextTurn();
    const envelope = new ResponseEnvelope(dto);
    const keep = (response: Record<string, unknown>) =>
      dto.store === false ? Promise.resolve() : this.save(team, response, input, history, values);
    const res = client.response;
    return {
      kind: 'chat',
      request: translated.chat,
      wire: this.wire(dto, history, envelope, translated, keep, res),
      reply: async (answer) => {
        let response: Record<string, unknown>;
        if (answer.native) {
          response = answer.upstreamBody as Record<string, unknown>;
          asClientSees(dto, response);
          // A 200 that says `status: "failed"` carries the vendor's own error words, which may echo its key.
          scrubVendorError(response, backendSecrets(this.config.backends[answer.backendId] ?? {}));
        } else {
          droppedToolsHeader(res, translated);
          response = chatToResponse(answer.completion, envelope, translated.toolNames);
        }
        await keep(response);
        return response;
      },
    };
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

  private wire(
    dto: ResponsesRequestDto,
    history: StoredResponse['conversation'],
    envelope: ResponseEnvelope,
    translated: TranslatedRequest,
    keep: (response: Record<string, unknown>) => Promise<void>,
    res: ServerResponse,
  ): ClientWire {
    let encoder: SealableEncoder | undefined;
    return {
      native: {
        api: 'responses',
        accepts: speaksResponses,
        call: (deployment, stream) =>
          deployment.backend.adapter.nativeCall!({
            api: 'responses',
            body: nativeResponsesBody(dto, history, deployment.upstreamModel),
            stream,
            clientHeaders: {},
          }),
      },
      streamEncoder: (_deployment, native) => {
        if (native)
          return (encoder = new NativeResponsesEncoder(
            (response) => asClientSees(dto, response),
            (id, error) => failedResponse(dto, id, error),
          ));
        droppedToolsHeader(res, translated);
        return (encoder = new ResponsesStreamEncoder(envelope, translated.toolNames));
      },
      thinkingIsAHint: true, // Codex sends reasoning settings to every model
      // Stored before response.completed goes out: a client may continue the moment it has it.
      beforeStreamEnd: async (outcome) => {
        if (!encoder || outcome.aborted) return;
        encoder.seal({ usage: outcome.usage, error: outcome.error });
        if (encoder.final) await keep(encoder.final);
      },
    };
  }

  private async save(
    team: string,
    response: Record<string, unknown>,
    input: StoredResponse['input'],
    history: StoredResponse['conversation'],
    values: number,
  ): Promise<void> {
    try {
      await this.store.save(team, { response, input, history, values });
    } catch (error) {
      // The answer is still the client's; only retrieving or continuing it later will fail (a 404 then).
      this.logger.pino.warn({ err: error, responseId: response.id }, 'could not store the response');
    }
  }

  private async previous(team: string, id: string): Promise<StoredResponse> {
    const stored = await this.store.load(team, id);
    if (!stored) {
      throw new GatewayException(
        'previous_response_not_found',
        `Previous response with id '${id}' not found.`,
        { param: 'previous_response_id' },
      );
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
  return new GatewayException('response_not_found', `Response with id '${id}' not found.`, {
    param: 'response_id',
  });
}

/** A response from a native call as the client sees it: its model name, its `store` and `previous_response_id`. */
function asClientSees(dto: ResponsesRequestDto, response: Record<string, unknown>): void {
  response.model = dto.model;
  response.store = dto.store !== false;
  response.previous_response_id = dto.previous_response_id ?? null;
}

/** Every string in a native Response's `error` (message, code...) with the backend's keys removed. */
function scrubVendorError(response: Record<string, unknown>, secrets: string[]): void {
  const error = response.error;
  if (!error || typeof error !== 'object') return;
  for (const [name, value] of Object.entries(error))
    if (typeof value === 'string') (error as Record<string, unknown>)[name] = scrub(value, secrets);
}

function failedResponse(
  dto: ResponsesRequestDto,
  id: string | undefined,
  error: GatewayException,
): Record<string, unknown> {
  const body = error.toBody().error;
  const envelope = new ResponseEnvelope(dto);
  return {
    ...envelope.build({
      status: 'failed',
      output: [],
      usage: null,
      error: responseError(body.code, body.message),
    }),
    ...(id ? { id } : {}),
  };
}

/** Hosted tools a chat backend cannot run were left out of the translation: say which. */
function droppedToolsHeader(res: ServerResponse, translated: TranslatedRequest): void {
  if (translated.droppedTools.length && !res.headersSent)
    res.setHeader('x-switchyard-dropped-tools', translated.droppedTools.join(','));
}
