import type { ChatRequest } from '../../core/chat-request';
import type { CallTarget } from '../provider-adapter';
import { toAnthropicBody } from '../anthropic/anthropic.request';

/** The `anthropic_version` Bedrock's InvokeModel takes in the body (no anthropic-version header). */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * The Anthropic betas Bedrock accepts in `anthropic_beta`. Bedrock refuses the whole request on a flag it does not
 * know ("invalid beta flag"), and Anthropic-API clients (Claude Code) send several it does not have
 * (`claude-code-20250219`, `effort-2025-11-24`, `thinking-token-count-...`, `prompt-caching-...`, `files-api-...`), so
 * only these pass: the flags AWS's "Anthropic Claude Messages API" request page lists for `anthropic_beta` (tool
 * search is `tool-search-tool-2025-10-19` on Bedrock and Vertex) and computer-use-2024-10-22 from its computer-use
 * page. Flags that page does not list (web search, whose server tool Bedrock does not run; fine-grained tool
 * streaming; computer-use-2025-11-24) are left out, since one unknown flag fails the whole request.
 * docs/backends.md lists them.
 */
export const BEDROCK_BETAS: ReadonlySet<string> = new Set([
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'token-efficient-tools-2025-02-19',
  'tool-examples-2025-10-29',
  'tool-search-tool-2025-10-19',
]);

/** Anthropic API betas whose Bedrock flag has another name. */
const BETA_ALIASES: Readonly<Record<string, string>> = {
  'advanced-tool-use-2025-11-20': 'tool-search-tool-2025-10-19',
};

/**
 * The body members Bedrock's Messages schema takes; it refuses any other ("extraneous key [x] is not permitted"),
 * so Anthropic-API-only members a client sends (`metadata`, `service_tier`, `container`, `mcp_servers`, `speed`...)
 * are left out, as are `model` (in the path) and `stream` (the operation). `output_config` passes with its `effort`
 * alone: AWS's adaptive-thinking page documents `output_config.effort` on InvokeModel (the depth of adaptive thinking,
 * the only control the newest Claude models take), and nothing else of it.
 */
const BEDROCK_BODY_MEMBERS: ReadonlySet<string> = new Set([
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'thinking',
  'context_management',
]);

/** The `anthropic-beta` header's flags (a comma list, possibly repeated) that Bedrock accepts, renamed, deduplicated. */
export function bedrockBetas(header: string | string[] | undefined): string[] {
  const flags = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  const kept = new Set<string>();
  for (const raw of flags) {
    const flag = raw.trim();
    const named = BETA_ALIASES[flag] ?? flag;
    if (BEDROCK_BETAS.has(named)) kept.add(named);
  }
  return [...kept];
}

/**
 * An Anthropic Messages body -> InvokeModel's: the members Bedrock takes, unchanged (thinking blocks and their
 * signatures as they came), `anthropic_version`, and the betas as `anthropic_beta`.
 */
export function invokeBody(messagesBody: Record<string, unknown>, betas: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION };
  if (betas.length) body.anthropic_beta = betas;
  for (const [name, value] of Object.entries(messagesBody))
    if (BEDROCK_BODY_MEMBERS.has(name)) body[name] = value;
  const effort = (messagesBody.output_config as { effort?: unknown } | null | undefined)?.effort;
  if (typeof effort === 'string') body.output_config = { effort };
  return body;
}

/** A chat request translated to Messages by the Anthropic family, as InvokeModel's body. */
export function translatedInvokeBody(request: ChatRequest, target: CallTarget): Record<string, unknown> {
  return invokeBody(toAnthropicBody(request, target, false), []);
}

/**
 * count_tokens' body -> CountTokens' (`{"input":{"invokeModel":{"body":"<InvokeModel body as a string>"}}}`). The
 * InvokeModel body needs `max_tokens`, which a count request has none of: one more than a thinking budget, else 1.
 */
export function countTokensBody(messagesBody: Record<string, unknown>, betas: string[]): string {
  const budget = (messagesBody.thinking as { budget_tokens?: unknown } | undefined)?.budget_tokens;
  const maxTokens = typeof budget === 'number' ? budget + 1 : 1;
  const body = invokeBody({ ...messagesBody, max_tokens: maxTokens }, betas);
  return JSON.stringify({ input: { invokeModel: { body: JSON.stringify(body) } } });
}
