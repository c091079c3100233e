import type { ChatRequest } from '../../core/chat-request';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { CallTarget, StreamAnswer, StreamEvents } from '../provider-adapter';
import type { UpstreamBody } from '../upstream-client';
import { LocalAnswer } from './local-answer';
import { OpenAIAdapter } from '../openai/openai.adapter';
import { historyOf } from './local-history';
import { toolUseOf } from './local-tools';

/**
 * OpenAI options a local model does not implement. Each is refused with a 400 naming the field rather than
 * answered as if it had been applied (a 200 that silently ignored a JSON `response_format` or `logprobs` would
 * hand the client an answer of the wrong shape). A field set to its "off" value passes.
 */
const UNSUPPORTED: Array<{ field: string; isOff: (value: unknown) => boolean; why: string }> = [
  { field: 'n', isOff: (v) => v === 1, why: 'generates one choice per request' },
  {
    field: 'functions',
    isOff: (v) => Array.isArray(v) && v.length === 0,
    why: 'takes `tools`, not the deprecated `functions`',
  },
  {
    field: 'response_format',
    isOff: (v) => (v as { type?: unknown })?.type === 'text',
    why: 'has no structured output',
  },
  { field: 'logprobs', isOff: (v) => v === false, why: 'does not return log probabilities' },
  { field: 'top_logprobs', isOff: (v) => v === 0, why: 'does not return log probabilities' },
  {
    field: 'logit_bias',
    isOff: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
    why: 'does not take a logit bias',
  },
];

/**
 * A `local` backend: the request is OpenAI's, so the OpenAI adapter builds it; this adds its limits, and the rules a
 * vendor checks itself (tools and tool_choice, tool calls answered by tool messages), since here the gateway is the
 * vendor. The answer comes back as chat chunks the client made from the worker's messages (LocalAnswer), handed to
 * the relay as they are.
 */
export class LocalAdapter extends OpenAIAdapter {
  override decodeStream(body: UpstreamBody, _answer: StreamAnswer): StreamEvents {
    if (!(body instanceof LocalAnswer)) throw new TypeError('a local backend answers with a LocalAnswer');
    return body.steps();
  }

  validate(request: ChatRequest, _target: CallTarget): void {
    for (const { field, isOff, why } of UNSUPPORTED) {
      const value = request[field];
      if (value === undefined || value === null || isOff(value)) continue;
      throw new GatewayException(
        'invalid_request',
        `The model \`${request.model}\` runs locally and ${why}: '${field}' is not supported.`,
        {
          param: field,
          wireCode: 'unsupported_parameter',
        },
      );
    }
    toolUseOf(request, 'model');
    historyOf(request.messages);
  }
}
