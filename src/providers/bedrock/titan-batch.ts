import { jsonAnswer, sendInParts } from '../shared/split-calls';
import type { UpstreamResponse } from '../upstream-client';

/**
 * Titan Text Embeddings embeds one `inputText` per InvokeModel call, while an OpenAI embeddings request may carry
 * many inputs: the adapter asks for several Titan bodies at once as one JSON array (never a valid Titan body), and the
 * client sends one signed call per element, a few at a time (shared/split-calls.ts), and answers as if Bedrock had
 * embedded them together: `{"embeddings": [...], "inputTextTokenCount": <sum>}`, in input order. The first failure
 * is the answer (the adapter maps it like any Bedrock error).
 */
export function isTitanBatch(body: string | Buffer): boolean {
  return (typeof body === 'string' ? body[0] : String.fromCharCode(body[0])) === '[';
}

export async function sendTitanBatch(
  body: string | Buffer,
  sendOne: (body: string) => Promise<UpstreamResponse>,
): Promise<UpstreamResponse> {
  const requests = JSON.parse(body.toString()) as unknown[];
  const sent = await sendInParts(
    requests.map((request) => JSON.stringify(request)),
    sendOne,
  );
  if ('failed' in sent) return sent.failed;
  const answers = sent.answers as Array<{ embedding?: unknown; inputTextTokenCount?: unknown } | null>;
  const tokens = answers.reduce(
    (sum, answer) => sum + (typeof answer?.inputTextTokenCount === 'number' ? answer.inputTextTokenCount : 0),
    0,
  );
  return jsonAnswer({ embeddings: answers.map((answer) => answer?.embedding), inputTextTokenCount: tokens });
}
