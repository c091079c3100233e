import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpstreamCall } from '../../src/core/upstream-call';
import { AuthorisedClient, type Authorised } from '../../src/providers/shared/authorised-client';
import { untilAborted } from '../../src/providers/shared/until-aborted';
import type { UpstreamResponse } from '../../src/providers/upstream-client';
import { buildConfig } from '../support/config';

describe('untilAborted (providers/shared)', () => {
  it("is the work's value, or the work's failure, when the signal stays quiet", async () => {
    const quiet = new AbortController().signal;
    await expect(untilAborted(Promise.resolve('token'), quiet)).resolves.toBe('token');
    await expect(untilAborted(Promise.reject(new Error('refused')), quiet)).rejects.toThrow('refused');
  });

  it("is the signal's reason as soon as it aborts, while the work goes on for whoever else waits", async () => {
    let release!: (value: string) => void;
    const work = new Promise<string>((resolve) => (release = resolve));
    const left = new AbortController();
    const waiting = untilAborted(work, left.signal);
    left.abort(new Error('client left'));
    await expect(waiting).rejects.toThrow('client left');
    release('later');
    await expect(work).resolves.toBe('later');
  });

  it('is the reason at once when the signal had already aborted', async () => {
    const gone = new AbortController();
    gone.abort(new Error('gone before'));
    await expect(untilAborted(new Promise<string>(() => undefined), gone.signal)).rejects.toThrow(
      'gone before',
    );
  });
});

describe('AuthorisedClient (providers/shared)', () => {
  let server: Server;
  let seen: IncomingHttpHeaders[];
  let status: number;
  let baseUrl: string;

  beforeAll(async () => {
    seen = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A family that signs each call with a counter and remembers which answers it was told of. */
  class Counting extends AuthorisedClient {
    signed = 0;
    answers: number[] = [];
    protected authorise(call: UpstreamCall): Promise<Authorised> {
      const n = ++this.signed;
      return Promise.resolve({
        headers: { ...call.headers, authorization: `Bearer t${n}` },
        answered: (response: UpstreamResponse) => this.answers.push(response.status),
      });
    }
  }

  it("sends each call with the family's headers and tells the family how it was answered", async () => {
    const config = buildConfig({ backends: { b: { type: 'openai', baseUrl, apiKey: 'k' } }, models: {} }, {})
      .backends.b;
    const client = new Counting('b', config);
    const call = { path: '/x', headers: { 'x-keep': 'yes' }, body: '{}' };
    status = 200;
    await (await client.send(call, new AbortController().signal)).body.text();
    status = 401;
    await (await client.send(call, new AbortController().signal)).body.text();
    expect(seen.map((h) => [h.authorization, h['x-keep']])).toEqual([
      ['Bearer t1', 'yes'],
      ['Bearer t2', 'yes'],
    ]);
    expect(client.answers).toEqual([200, 401]);
    await client.close();
  });
});
