import type { UpstreamResponse } from '../upstream-client';

/** Titan calls in flight at once for one batch (each holds a pooled connection while it runs). */
const AT_ONCE = 4;

/**
 * Titan Text Embeddings embeds one `inputText` per InvokeModel call, while an OpenAI embeddings request may carry
 * many inputs: the adapter asks for several Titan bodies at once as one JSON array (never a valid Titan body), and the
 * client sends one signed call per element, a few at a time, and answers as if Bedrock had embedded them together:
 * `{"embeddings": [...], "inputTextTokenCount": <sum>}`, in input order. The first failure is the answer (the
 * adapter maps it like any Bedrock error).
 */
export function isTitanBatch(body: string | Buffer): boolean {
  return (typeof body === 'string' ? body[0] : String.fromCharCode(body[0])) === '[';
}

export async function sendTitanBatch(
  body: string | Buffer,
  sendOne: (body: string) => Promise<UpstreamResponse>,
): Promise<UpstreamResponse> {
  const requests = JSON.parse(body.toString()) as unknown[];
  const answers: Array<{ embedding?: unknown; inputTextTokenCount?: unknown }> = [];
  for (let at = 0; at < requests.length; at += AT_ONCE) {
    const responses = await Promise.all(
      requests.slice(at, at + AT_ONCE).map((request) => sendOne(JSON.stringify(request))),
    );
    const failed = responses.find((response) => response.status < 200 || response.status >= 300);
    if (failed) {
      // The others' bodies are read to their end, so their pooled connections are free again.
      await Promise.all(responses.filter((r) => r !== failed).map((r) => r.body.text().catch(() => '')));
      return failed;
    }
    for (const response of responses) answers.push((await response.body.json()) as (typeof answers)[number]);
  }
  const tokens = answers.reduce(
    (sum, answer) => sum + (typeof answer.inputTextTokenCount === 'number' ? answer.inputTextTokenCount : 0),
    0,
  );
  const text = JSON.stringify({
    embeddings: answers.map((answer) => answer.embedding),
    inputTextTokenCount: tokens,
  });
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: {
      json: () => Promise.resolve(JSON.parse(text) as unknown),
      text: () => Promise.resolve(text),
      async *[Symbol.asyncIterator]() {
        yield Buffer.from(text);
      },
    },
  };
}
