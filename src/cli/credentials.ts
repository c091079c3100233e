import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `switchyard login` keeps for one gateway: the person's personal admin token and who it names. */
export interface StoredLogin {
  token: string;
  tokenId: string;
  subject: string;
  email?: string;
  expiresAt: string;
}

interface CredentialsFile {
  /** The gateway of the last login: the one later commands talk to when no --url or SWITCHYARD_URL names one. */
  default?: string;
  gateways: Record<string, StoredLogin>;
}

/**
 * Where the CLI keeps its logins: `$XDG_CONFIG_HOME/switchyard/credentials.json` (`~/.config/...` by default), one
 * login per gateway URL. The file holds secrets: it is written 0600 (its folder 0700), by a rename so a reader
 * never sees half of it (which also puts it back to 0600 if someone loosened it).
 */
export class CredentialStore {
  constructor(readonly path: string = defaultCredentialsPath()) {}

  /** The login kept for `url` (any spelling `gatewayUrl` accepts), or undefined. */
  get(url: string): StoredLogin | undefined {
    const gateways = this.read().gateways;
    const key = gatewayUrl(url);
    return Object.hasOwn(gateways, key) ? gateways[key] : undefined;
  }

  /** The gateway of the last login, or undefined when there is none. */
  defaultUrl(): string | undefined {
    return this.read().default;
  }

  /** Keeps the login for `url`, which becomes the default gateway. */
  save(url: string, login: StoredLogin): void {
    const file = this.read();
    const key = gatewayUrl(url);
    this.write({ default: key, gateways: { ...file.gateways, [key]: login } });
  }

  /** Forgets the login for `url` (and the default, if it was that gateway). */
  forget(url: string): void {
    const file = this.read();
    const key = gatewayUrl(url);
    const gateways = Object.fromEntries(Object.entries(file.gateways).filter(([url]) => url !== key));
    this.write({ ...(file.default && file.default !== key ? { default: file.default } : {}), gateways });
  }

  private read(): CredentialsFile {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { gateways: {} };
      throw error;
    }
    const parsed = JSON.parse(text) as Partial<CredentialsFile>;
    return {
      ...(typeof parsed.default === 'string' ? { default: parsed.default } : {}),
      gateways: parsed.gateways && typeof parsed.gateways === 'object' ? parsed.gateways : {},
    };
  }

  private write(file: CredentialsFile): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    // A new file each time (a mode given to writeFileSync applies to new files only), renamed over the old one: so
    // the file is 0600 even when someone had loosened the old one.
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, this.path);
  }
}

export function defaultCredentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'switchyard', 'credentials.json');
}

/**
 * A gateway's URL as the store keys it: http(s), no trailing slash, no query or fragment (`https://gw.example.com/`
 * and `https://gw.example.com` are one gateway). Anything else is refused with the reason.
 */
export function gatewayUrl(text: string): string {
  const url = URL.parse(text);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new Error(`"${text}" is not a gateway URL (https://... or http://...)`);
  if (url.username || url.password) throw new Error('a gateway URL carries no user or password');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
