#!/usr/bin/env node
import 'reflect-metadata';
import { ConfigError } from '../config/config.loader';
import { GatewayException } from '../core/errors/gateway.exception';
import { buildProgram } from './program';

/** `switchyard`: the commands are in program.ts; here, running them and the exit code (78 for a config error). */
buildProgram()
  .parseAsync()
  .catch((error: unknown) => {
    if (error instanceof GatewayException || error instanceof ConfigError)
      process.stderr.write(`switchyard: ${error.message}\n`);
    else process.stderr.write(`switchyard: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = error instanceof ConfigError ? 78 : 1;
  });
