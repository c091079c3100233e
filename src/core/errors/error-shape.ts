import { sseData } from '../sse-writer';
import type { GatewayException } from './gateway.exception';

/**
 * How an endpoint's errors look: the JSON body of an error answer, and the last event of a stream whose headers
 * have gone out already.
 */
export interface ErrorShape {
  body(exception: GatewayException, requestId?: string): object;
  streamEvent(exception: GatewayException): string;
}

/** OpenAI's: `{"error":{message,type,param,code}}`, in a `data:` event once streaming. Every route but Anthropic's. */
export const openAiErrors: ErrorShape = {
  body: (exception) => exception.toBody(),
  streamEvent: (exception) => sseData(JSON.stringify(exception.toBody())),
};
