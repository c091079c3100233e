import { Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { Redactor } from './redaction/redactor';

/**
 * The gateway's one Redactor, built from `logging.requests.redaction` at start: the request log's store, the
 * traces' content attributes and any exporter redact through it (docs/request-log.md, redaction).
 */
@Injectable()
export class RequestLogRedactor extends Redactor {
  constructor(config: GatewayConfig) {
    super({ patterns: config.logging.requests.redaction.patterns });
  }
}
