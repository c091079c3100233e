// One rung of the stack ladder (bench/layers.mjs): the floor's proxy (bearer check, JSON body, one upstream call,
// the answer written back) built on one more layer of Switchyard's stack per rung, and nothing of Switchyard's
// own. LAYER=express|nest|validation|redis UPSTREAM=http://127.0.0.1:PORT TOKEN=... node bench/lib/layer-server.mjs
//   express     Express 5: its router and express.json() (body-parser), the handler writes the answer itself
//   nest        the same handler as a Nest 11 controller on platform-express (@Req/@Res), body parsed by a guard
//   validation  + the gateway's global ValidationPipe and its real ChatCompletionRequestDto (@Body)
//   redis       + one Lua script per request through ioredis (auto-pipelined, like the admission) and one XADD
//                 after it (like the usage record)
// Prints {"port": N} when it listens.
import 'reflect-metadata';
import { join } from 'node:path';
import express from 'express';
import { Pool } from 'undici';

const layer = process.env.LAYER;
const upstream = new Pool(process.env.UPSTREAM, { connections: 256 });
const token = `Bearer ${process.env.TOKEN}`;
const dist = join(import.meta.dirname, '../../dist');

const unauthorized =
  '{"error":{"message":"bad token","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}';

/** The floor's upstream call and relay, shared by every rung so only the layer under it differs. */
async function relay(body, res) {
  const answer = await upstream.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
  for await (const chunk of answer.body) res.write(chunk);
  res.end();
}

const listening = (server) => console.log(JSON.stringify({ port: server.address().port }));

if (layer === 'express') {
  const app = express();
  app.use(express.json({ limit: '16mb' }));
  app.post('/v1/chat/completions', (req, res) => {
    if (req.headers.authorization !== token) return void res.status(401).type('json').send(unauthorized);
    relay(req.body, res).catch(() => res.destroy());
  });
  const server = app.listen(0, '127.0.0.1', () => listening(server));
} else {
  const { NestFactory } = await import('@nestjs/core');
  const common = await import('@nestjs/common');
  const { Body, Controller, Injectable, Module, Post, Req, Res, UseGuards } = common;
  const withValidation = layer === 'validation' || layer === 'redis';
  const { ChatCompletionRequestDto } = await import(
    join(dist, 'endpoints/chat-completions/dto/chat-completion-request.dto.js')
  );
  const { GatewayValidationPipe } = await import(join(dist, 'common/validation/validation.pipe.js'));

  const parseJson = express.json({ limit: '16mb' });
  class BodyGuard {
    async canActivate(context) {
      const http = context.switchToHttp();
      const req = http.getRequest();
      if (req.headers.authorization !== token) throw new common.UnauthorizedException();
      await new Promise((resolve, reject) =>
        parseJson(req, http.getResponse(), (error) => (error ? reject(error) : resolve())),
      );
      return true;
    }
  }
  Injectable()(BodyGuard);

  let redis;
  let admit;
  if (layer === 'redis') {
    const { default: Redis } = await import('ioredis');
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: true });
    const prefix = `sy-layers:${process.pid}:`;
    redis.defineCommand('admit', {
      numberOfKeys: 2,
      lua: `local a = redis.call('INCR', KEYS[1]) if a == 1 then redis.call('EXPIRE', KEYS[1], 60) end
            local b = redis.call('INCRBY', KEYS[2], ARGV[1]) if b == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[2], 86400) end
            return {a, b}`,
    });
    admit = () => redis.admit(`${prefix}rpm`, `${prefix}tpd`, 10);
    process.on('SIGTERM', async () => {
      await redis.del(`${prefix}rpm`, `${prefix}tpd`, `${prefix}usage`);
      process.exit(0);
    });
  }

  class ChatController {
    async create(body, req, res) {
      if (admit) await admit();
      await relay(body, res);
      if (redis)
        redis
          .xadd(`sy-layers:${process.pid}:usage`, 'MAXLEN', '~', '1000', '*', 'team', 'bench', 'tokens', '30')
          .catch(() => {});
    }
  }
  // Decorators applied by hand (this file is plain JavaScript); the same metadata TypeScript would emit.
  Controller('v1/chat')(ChatController);
  const descriptor = Object.getOwnPropertyDescriptor(ChatController.prototype, 'create');
  Reflect.defineMetadata(
    'design:paramtypes',
    [withValidation ? ChatCompletionRequestDto : Object, Object, Object],
    ChatController.prototype,
    'create',
  );
  Body()(ChatController.prototype, 'create', 0);
  Req()(ChatController.prototype, 'create', 1);
  Res()(ChatController.prototype, 'create', 2);
  UseGuards(BodyGuard)(ChatController.prototype, 'create', descriptor);
  Post('completions')(ChatController.prototype, 'create', descriptor);
  Object.defineProperty(ChatController.prototype, 'create', descriptor);

  class LayerModule {}
  Module({ controllers: [ChatController], providers: [BodyGuard] })(LayerModule);
  const app = await NestFactory.create(LayerModule, { bodyParser: false, logger: false });
  if (withValidation) app.useGlobalPipes(new GatewayValidationPipe());
  await app.listen(0, '127.0.0.1');
  listening(app.getHttpServer());
}
