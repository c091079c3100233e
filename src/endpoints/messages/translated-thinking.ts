import { createHash } from 'node:crypto';

/**
 * Thinking from a backend that is not Anthropic (reasoning_content) goes to Messages clients as a `thinking`
 * block, which must carry a signature (Claude Code replays the block verbatim). The gateway signs it with a
 * marker of its own, so it can recognise the block when it comes back and drop it before a real Anthropic
 * backend sees it: Anthropic rejects any signature it did not make ("Invalid `signature` in `thinking` block").
 */
const PREFIX = 'switchyard:';

export function gatewaySignature(thinking: string): string {
  return PREFIX + createHash('sha256').update(thinking).digest('base64');
}

export function isGatewaySignature(signature: unknown): boolean {
  return typeof signature === 'string' && signature.startsWith(PREFIX);
}
