import { ERROR_CODES, type ErrorCode } from './error-codes';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface GatewayExceptionOptions {
  param?: string | null;
  /** Overrides the table's `type` (e.g. an upstream 429 says `tokens` or `requests`). */
  type?: string;
  /** Headers to send with the error (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** Overrides the code sent on the wire (an upstream's own code, like `context_length_exceeded`). */
  wireCode?: string | null;
  /** Overrides the table's status (an upstream 4xx we pass through as it came). */
  status?: number;
  /**
   * The gateway's own capacity for a backend is full (a local model's queue, every pooled connection busy):
   * another deployment may take the request at once, calling the same one again only adds waiting.
   */
  atCapacity?: boolean;
  /**
   * The deployment cannot answer any request as configured (its key was refused, its upstream model does not
   * exist): another deployment may, the same one never will, so it is not called again for this request.
   */
  deploymentFault?: boolean;
  /** What the backend itself said (its status and message, keys scrubbed), for the gateway's log: never sent to clients. */
  upstream?: UpstreamSaid;
  cause?: unknown;
}

export interface UpstreamSaid {
  status: number;
  message?: string;
}

/** Thrown by services; turned into OpenAI's error body by the one exception filter. */
export class GatewayException extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly wireCode: string | null;
  readonly headers: Record<string, string>;
  readonly atCapacity: boolean;
  readonly deploymentFault: boolean;
  readonly upstream?: UpstreamSaid;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: GatewayExceptionOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'GatewayException';
    this.status = options.status ?? ERROR_CODES[code].status;
    this.type = options.type ?? ERROR_CODES[code].type;
    this.param = options.param ?? null;
    this.wireCode = options.wireCode === undefined ? code : options.wireCode;
    this.headers = options.headers ?? {};
    this.atCapacity = options.atCapacity === true;
    this.deploymentFault = options.deploymentFault === true;
    this.upstream = options.upstream;
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.wireCode } };
  }
}
