// The floor: the least a Node gateway can do. Plain http + undici, a bearer-token check, a JSON
// parse of the body, one upstream call, and the answer piped back (streams included).
// UPSTREAM=http://127.0.0.1:PORT TOKEN=... node bench/floor-proxy.mjs  -> prints {"port": N}
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new Pool(process.env.UPSTREAM, { connections: 256 });
const token = `Bearer ${process.env.TOKEN}`;

const server = createServer(async (req, res) => {
  if (req.headers.authorization !== token) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return res.end(
      '{"error":{"message":"bad token","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}',
    );
  }
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(
      '{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}',
    );
  }
  try {
    const answer = await upstream.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"upstream failed","type":"server_error","param":null,"code":null}}');
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
