import type { IncomingMessage, ServerResponse } from 'node:http';
import { unknownGeminiField } from './gemini-request-fields';
import { generate, StandInServer, standInEmbedding, words, type RecordedRequest } from './standin-server';
import { cacheCountsOf } from './cache-usage';

/**
 * A stand-in Gemini (Generative Language API v1beta), written from Google's docs:
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse` with
 * `x-goog-api-key`; roles `user`/`model`; `systemInstruction`; `generationConfig`
 * (`thinkingConfig.thinkingBudget`, `includeThoughts`); function calls as `functionCall`
 * parts; errors `{"error":{code,message,status}}`; streams are `data:` events each holding a
 * GenerateContentResponse, the last with `finishReason`, no end marker. A member the request may not have is a
 * 400 (gemini-request-fields.ts), as Gemini's parser answers it. Text answers honour
 * `generationConfig.maxOutputTokens` (finishReason MAX_TOKENS, a token is a word) and `stopSequences` (cut before
 * the first one, finishReason STOP).
 *
 * Behaviour by model:
 *   gemini-echo        answers "echo: <last user text>" (after a thought part when includeThoughts
 *                      and a budget > 0; a functionCall when tools are offered and the last turn is
 *                      not a functionResponse); with generationConfig.candidateCount n, n candidates,
 *                      candidate i's text i words longer ("(answer i+1 of n)"), so when streamed they
 *                      finish in different events, each with its finishReason
 *   gemini-unfinished  as gemini-echo, but when streamed the last of n > 1 candidates never sends its
 *                      finishReason before the stream ends (its parts and the usage still come)
 *   gemini-cached-<reads>-<w5m>-<w1h> as gemini-echo, with <reads> more prompt tokens from Gemini's context cache,
 *                      reported as Gemini does: in `promptTokenCount` and as `cachedContentTokenCount` (Gemini
 *                      reports no cache writes: the write counts in the name are not used)
 *   gemini-exhausted   HTTP 429 RESOURCE_EXHAUSTED
 *   gemini-blocked     200 with no candidates, only `promptFeedback.blockReason: SAFETY` (a prompt Gemini refuses)
 *   gemini-safety      the echo's first word, then the candidate ends with finishReason SAFETY (an answer stopped
 *                      by the safety filters)
 *   gemini-parallel    with functions declared: one functionCall part per function (the first twice when only one
 *                      is declared), without ids (Gemini's API sends none)
 *   gemini-midstream   streamed: one event, then an `error` object in the stream (a 200 that fails in-band)
 * and `models/{model}:batchEmbedContents` for any model (see `embed`).
 */
export class GeminiUpstream extends StandInServer {
  get url(): string {
    return `${this.origin}/v1beta`;
  }

  /**
   * `batchEmbedContents`: `{requests: [{model: "models/<m>", content: {parts: [{text}]}, outputDimensionality?}]}`
   * -> `{embeddings: [{values}]}` (no usage in Gemini's answer). Vectors derive from the text (equal texts, equal
   * vectors), 6 long unless outputDimensionality says otherwise.
   */
  private embed(
    model: string,
    headers: RecordedRequest['headers'],
    body: Record<string, any>,
    res: ServerResponse,
  ): void {
    if (headers['x-goog-api-key'] !== 'upstream-secret-key')
      return error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (!Array.isArray(body.requests))
      return error(
        res,
        400,
        'INVALID_ARGUMENT',
        '* BatchEmbedContentsRequest.requests: requests is not specified',
      );
    for (const request of body.requests) {
      const size = request.outputDimensionality;
      // Gemini's embedding models make at most 3072 dimensions (the message is the stand-in's own words).
      if (size !== undefined && !(Number.isInteger(size) && size >= 1 && size <= 3072))
        return error(
          res,
          400,
          'INVALID_ARGUMENT',
          '* BatchEmbedContentsRequest.requests[].output_dimensionality: must be between 1 and 3072',
        );
      if (request.model !== `models/${model}`)
        return error(
          res,
          400,
          'INVALID_ARGUMENT',
          `* BatchEmbedContentsRequest.requests[].model: must be models/${model}`,
        );
    }
    const embeddings = body.requests.map(
      (request: { content: { parts: Array<{ text: string }> }; outputDimensionality?: number }) => {
        const text = request.content.parts.map((part) => part.text).join('');
        return { values: standInEmbedding(text, request.outputDimensionality ?? 6) };
      },
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ embeddings }));
  }

  /** Gemini names the model in the path. */
  protected override modelOf(recorded: RecordedRequest): string {
    return /^\/v1beta\/models\/([^/:]+):/.exec(recorded.path)?.[1] ?? '';
  }

  protected handle(recorded: RecordedRequest, _req: IncomingMessage, res: ServerResponse): void {
    const { path, headers, body } = recorded;
    const embed = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(path);
    if (embed) return this.embed(embed[1], headers, body, res);
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)(\?alt=sse)?$/.exec(
      path,
    );
    if (!route) return error(res, 404, 'NOT_FOUND', `Path ${path} not found`);
    if (headers['x-goog-api-key'] !== 'upstream-secret-key')
      return error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    const [, model, method] = route;
    const unknown = unknownGeminiField(body);
    if (unknown) return error(res, 400, 'INVALID_ARGUMENT', unknown);
    if (model === 'gemini-exhausted')
      return error(res, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).');
    if (!Array.isArray(body.contents) || body.contents.length === 0)
      return error(
        res,
        400,
        'INVALID_ARGUMENT',
        '* GenerateContentRequest.contents: contents is not specified',
      );

    const last = body.contents[body.contents.length - 1];
    const functionResponse = last.parts.find((p: any) => p.functionResponse)?.functionResponse;
    const userText = last.parts
      .filter((p: any) => typeof p.text === 'string')
      .map((p: any) => p.text)
      .join(' ');
    const thinking = body.generationConfig?.thinkingConfig;
    const parts: Array<Record<string, any>> = [];
    if (thinking?.includeThoughts && thinking.thinkingBudget > 0)
      parts.push({ text: `Thinking about ${userText || 'the result'}.`, thought: true });
    const declarations = body.tools?.[0]?.functionDeclarations;
    const config = body.generationConfig ?? {};
    let finishReason = 'STOP';
    const answer = (text: string) => {
      const made = generate(text, { maxTokens: config.maxOutputTokens, stops: config.stopSequences });
      if (made.ended === 'max_tokens') finishReason = 'MAX_TOKENS';
      parts.push({ text: made.text });
    };
    if (model === 'gemini-blocked') return this.blocked(body, method, res);
    if (functionResponse)
      answer(`tool ${functionResponse.name} said: ${JSON.stringify(functionResponse.response)}`);
    else if (declarations?.length && body.toolConfig?.functionCallingConfig?.mode !== 'NONE') {
      const called =
        model === 'gemini-parallel' && declarations.length === 1
          ? [declarations[0], declarations[0]]
          : model === 'gemini-parallel'
            ? declarations
            : [declarations[0]];
      for (const [i, declaration] of called.entries())
        parts.push({
          functionCall: {
            name: declaration.name,
            args: model === 'gemini-parallel' ? { query: userText, call: i + 1 } : { query: userText },
          },
        });
    } else if (model === 'gemini-safety') {
      parts.push({ text: 'echo: ' });
      finishReason = 'SAFETY';
    } else answer(`echo: ${userText}`);

    const count = Math.max(1, Number(body.generationConfig?.candidateCount ?? 1));
    const candidates = Array.from({ length: count }, (_, i) =>
      i === 0
        ? parts
        : parts.map((p) =>
            typeof p.text === 'string' && !p.thought
              ? { ...p, text: `${p.text} (answer ${i + 1} of ${count})` }
              : p,
          ),
    );
    const cachedContentTokenCount = cacheCountsOf(model)?.reads;
    const promptTokenCount =
      body.contents.reduce((n: number, c: any) => n + words(JSON.stringify(c.parts)), 0) +
      (cachedContentTokenCount ?? 0);
    const thoughtsOf = (ps: Array<Record<string, any>>) =>
      ps.filter((p) => p.thought).reduce((n, p) => n + words(p.text), 0);
    const answerOf = (ps: Array<Record<string, any>>) =>
      ps.filter((p) => !p.thought).reduce((n, p) => n + words(p.text ?? JSON.stringify(p.functionCall)), 0);
    const usageOf = (perCandidate: Array<Array<Record<string, any>>>) => {
      const thoughtsTokenCount = perCandidate.reduce((n, ps) => n + thoughtsOf(ps), 0);
      const candidatesTokenCount = perCandidate.reduce((n, ps) => n + answerOf(ps), 0);
      return {
        promptTokenCount,
        candidatesTokenCount,
        totalTokenCount: promptTokenCount + candidatesTokenCount + thoughtsTokenCount,
        ...(cachedContentTokenCount === undefined ? {} : { cachedContentTokenCount }),
        ...(thoughtsTokenCount ? { thoughtsTokenCount } : {}),
      };
    };
    const base = { modelVersion: `${model}-001`, responseId: this.id('', 22) };
    recorded.usage = usageOf(candidates);

    if (method === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(
        JSON.stringify({
          candidates: candidates.map((ps, index) => ({
            content: { role: 'model', parts: ps },
            finishReason,
            index,
          })),
          usageMetadata: usageOf(candidates),
          ...base,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // One event per step: each unfinished candidate's next part (text parts split by word), finishReason with a
    // candidate's last part, usage cumulative over what every candidate has sent so far.
    const pieces = candidates.map((ps) =>
      ps.flatMap((p) =>
        typeof p.text === 'string' ? p.text.split(/(?<= )/).map((text: string) => ({ ...p, text })) : [p],
      ),
    );
    const steps = Math.max(...pieces.map((list) => list.length));
    for (let step = 0; step < steps; step++) {
      const sent = pieces.map((list) => list.slice(0, step + 1));
      const now = pieces.flatMap((list, index) =>
        step < list.length
          ? [
              {
                content: { role: 'model', parts: [list[step]] },
                index,
                ...(step === list.length - 1 &&
                !(model === 'gemini-unfinished' && index === count - 1 && count > 1)
                  ? { finishReason }
                  : {}),
              },
            ]
          : [],
      );
      res.write(
        `data: ${JSON.stringify({ candidates: now, usageMetadata: usageOf(sent), ...base })}\r\n\r\n`,
      );
      if (model === 'gemini-midstream') {
        const failure = {
          code: 503,
          message: 'The model is overloaded. Please try again later.',
          status: 'UNAVAILABLE',
        };
        res.end(`data: ${JSON.stringify({ error: failure })}\r\n\r\n`);
        return;
      }
    }
    res.end();
  }

  /** A prompt Gemini blocks: 200, no candidates, the reason in promptFeedback (streamed: one such event). */
  private blocked(body: Record<string, any>, method: string, res: ServerResponse): void {
    const promptTokenCount = body.contents.reduce(
      (n: number, c: any) => n + words(JSON.stringify(c.parts)),
      0,
    );
    const answer = JSON.stringify({
      promptFeedback: {
        blockReason: 'SAFETY',
        safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH' }],
      },
      usageMetadata: { promptTokenCount, totalTokenCount: promptTokenCount },
      modelVersion: 'gemini-blocked-001',
      responseId: this.id('', 22),
    });
    if (method === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(answer);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${answer}\r\n\r\n`);
  }
}

function error(res: ServerResponse, code: number, status: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status } }));
}
