import type { NewToken } from '../auth/token.store';
import type { CreateTokenDto } from './admin.dto';

/** A token to issue, as a CreateTokenDto asks for it: an absolute or a relative expiry, models, limits. */
export function tokenSpecOf(body: CreateTokenDto): NewToken {
  const expiresAt = body.expiresAt
    ? new Date(body.expiresAt)
    : body.expiresInSeconds
      ? new Date(Date.now() + body.expiresInSeconds * 1000)
      : undefined;
  return { name: body.name, expiresAt, models: body.models, mcpTools: body.mcpTools, limits: body.limits };
}
