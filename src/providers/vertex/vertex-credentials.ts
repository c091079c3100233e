import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GoogleAuth } from 'google-auth-library';
import type { importPKCS8 } from 'jose';
import { scrub } from '../upstream-errors';

/** The OAuth scope Vertex AI's API takes. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Where a service-account key without its own `token_uri` is exchanged. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** An OAuth access token and when it stops being accepted (ms since the epoch). */
export interface AccessToken {
  token: string;
  expiresAt: number;
}

/** One way of getting a new token (a service-account exchange, or Google's library for the other ADC kinds). */
export interface TokenFetcher {
  fetch(): Promise<AccessToken>;
}

/**
 * Why no token could be had, in words safe to show and log (never the key, the assertion or a token): `refused`
 * when the token endpoint said no (a wrong or disabled key: only the operator can fix it), `unreachable` when it
 * could not be asked or answered with a server error (may pass).
 */
export class TokenError extends Error {
  constructor(
    readonly kind: 'refused' | 'unreachable',
    message: string,
  ) {
    super(message);
    this.name = 'TokenError';
  }
}

/** The members of a service-account key file this family reads. */
export interface ServiceAccountKey {
  type: 'service_account';
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

/**
 * A service account's token, by the JWT-bearer exchange (RFC 7523) done here: a JWT signed RS256 with the key
 * (iss = the account, aud = the token endpoint, the cloud-platform scope, an hour's life) posted to the key file's
 * own `token_uri`. google-auth-library (11.x, gtoken/getToken.js and jwsSign.js) posts it to Google's token URL
 * whatever the file says, so a private token endpoint (a test's, an air-gapped proxy's) would never be asked.
 */
export class ServiceAccountTokens implements TokenFetcher {
  private signingKey?: ReturnType<typeof importPKCS8>;

  constructor(
    private readonly key: ServiceAccountKey,
    private readonly timeoutMs: number,
  ) {}

  get tokenUri(): string {
    return this.key.token_uri || GOOGLE_TOKEN_URI;
  }

  /** The signed assertion (exported for the unit tests). */
  async assertion(now = Math.floor(Date.now() / 1000)): Promise<string> {
    // jose is loaded by the first backend that signs, not at boot (docs/performance.md, the process at rest).
    const { importPKCS8, SignJWT } = await import('jose');
    this.signingKey ??= importPKCS8(this.key.private_key, 'RS256').catch(() => {
      this.signingKey = undefined;
      throw new TokenError('refused', 'the service-account key file holds no usable RSA private key');
    });
    return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
      .setProtectedHeader({
        alg: 'RS256',
        typ: 'JWT',
        ...(this.key.private_key_id ? { kid: this.key.private_key_id } : {}),
      })
      .setIssuer(this.key.client_email)
      .setAudience(this.tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await this.signingKey);
  }

  async fetch(): Promise<AccessToken> {
    const assertion = await this.assertion();
    const sentAt = Date.now();
    let response: Response;
    try {
      response = await fetch(this.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch {
      throw new TokenError('unreachable', `the token endpoint ${this.tokenUri} could not be reached`);
    }
    const answer = (await response.json().catch(() => undefined)) as
      | { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown }
      | undefined;
    if (!response.ok) {
      // OAuth's error words (invalid_grant: "Invalid JWT Signature.") say what is wrong and carry no secret.
      const said = [answer?.error, answer?.error_description].filter((s) => typeof s === 'string').join(': ');
      throw new TokenError(
        response.status >= 500 || response.status === 429 ? 'unreachable' : 'refused',
        `the token endpoint ${this.tokenUri} answered HTTP ${response.status}${said ? ` (${said.slice(0, 200)})` : ''}`,
      );
    }
    if (typeof answer?.access_token !== 'string' || !answer.access_token)
      throw new TokenError('unreachable', `the token endpoint ${this.tokenUri} sent no access_token`);
    const lifetime =
      typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 3600;
    return { token: answer.access_token, expiresAt: sentAt + lifetime * 1000 };
  }
}

/**
 * Every other kind of Application Default Credentials, through google-auth-library: the metadata server (GCE,
 * GKE, Cloud Run), workload identity federation (`external_account` files), gcloud's user credentials,
 * impersonation. The library keeps and refreshes its own token; this reads it and when it expires.
 */
export class LibraryTokens implements TokenFetcher {
  private auth?: GoogleAuth;

  constructor(private readonly keyFilename: string | undefined) {}

  async fetch(): Promise<AccessToken> {
    try {
      // The library (~70 modules, ~20 MB resident) is loaded by the first token asked of it, not at boot.
      if (!this.auth) {
        const { GoogleAuth } = await import('google-auth-library');
        const keyFilename = this.keyFilename;
        this.auth ??= new GoogleAuth({
          scopes: [CLOUD_PLATFORM_SCOPE],
          ...(keyFilename ? { keyFilename } : {}),
        });
      }
      const client = await this.auth.getClient();
      const { token } = await client.getAccessToken();
      if (!token) throw new Error('no token');
      const expiry = client.credentials.expiry_date;
      return { token, expiresAt: typeof expiry === 'number' ? expiry : Date.now() + 5 * 60_000 };
    } catch (error) {
      // No credentials anywhere (no file, no gcloud login, not on Google Cloud) will not pass by itself: the
      // operator has to provide some, as for a refused key; nor will a token endpoint's 4xx (STS refusing a
      // workload's subject token or audience: invalid_grant, invalid_target). Anything else (the metadata server
      // or an STS endpoint failing, a 429) may pass.
      const said = libraryWords(error);
      const none = said.startsWith(NO_ADC_FOUND);
      const status = (error as { response?: { status?: unknown } } | null)?.response?.status;
      const refused = typeof status === 'number' && status >= 400 && status < 500 && status !== 429;
      throw new TokenError(
        none || refused ? 'refused' : 'unreachable',
        `Application Default Credentials ${none ? 'found none' : 'gave no token'}: ${said} (see ${ADC_DOCS})`,
      );
    }
  }
}

/** google-auth-library's words when it finds no credentials at all (GoogleAuthExceptionMessages.NO_ADC_FOUND). */
const NO_ADC_FOUND = 'Could not load the default credentials';
const ADC_DOCS = 'https://cloud.google.com/docs/authentication/application-default-credentials';

/**
 * google-auth-library's message, safe to log: its messages can quote a request (an Authorization header, a token
 * or an assertion in a body), so anything token-shaped is cut out, and it is kept to one short line.
 */
export function libraryWords(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const scrubbed = scrub(message, [])
    .replace(/\b(Bearer|Basic)\s+\S+/gi, '$1 [redacted]')
    .replace(/\bya29\.[\w.-]+/g, '[redacted]')
    .replace(/\beyJ[\w-]*\.[\w-]*\.?[\w-]*/g, '[redacted]')
    .replace(
      /("?(?:access_token|refresh_token|id_token|assertion|client_secret|private_key)"?\s*[:=]\s*)("[^"]*"|\S+)/gi,
      '$1[redacted]',
    )
    .replace(/\s+/g, ' ')
    .trim();
  return scrubbed.length > 300
    ? `${scrubbed.slice(0, 297)}...`
    : scrubbed || (error as Error)?.name || 'Error';
}

/** Where a backend's tokens come from, and why its credentials cannot work at all, when that shows up front. */
export interface TokenSource {
  fetcher: TokenFetcher;
  /** The credentials file is missing, unreadable, not JSON, or a service-account key whose key is not RSA. */
  problem?: string;
}

/**
 * The token source for a backend: a service-account key file (`credentialsFile`, else GOOGLE_APPLICATION_CREDENTIALS)
 * is exchanged here against its own token_uri; any other credentials file, or none, goes to google-auth-library.
 * A named file that cannot be used is said at once (the backend's models are then unavailable, naming it), rather
 * than on every request.
 */
export function tokenSourceFor(
  credentialsFile: string | undefined,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): TokenSource {
  const file = credentialsFile || env.GOOGLE_APPLICATION_CREDENTIALS || undefined;
  if (!file) return { fetcher: new LibraryTokens(undefined) };
  const named = `the Google credentials file ${file} (${credentialsFile ? 'credentialsFile' : 'GOOGLE_APPLICATION_CREDENTIALS'})`;
  const unusable = (problem: string): TokenSource => ({
    fetcher: { fetch: () => Promise.reject(new TokenError('refused', problem)) },
    problem,
  });
  let parsed: Partial<ServiceAccountKey> | null;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ServiceAccountKey> | null;
  } catch (error) {
    return unusable(`${named} cannot be used (${(error as NodeJS.ErrnoException).code ?? 'not JSON'})`);
  }
  if (parsed?.type !== 'service_account') return { fetcher: new LibraryTokens(credentialsFile || undefined) };
  if (typeof parsed.client_email !== 'string' || typeof parsed.private_key !== 'string')
    return unusable(`${named} is a service-account key without client_email or private_key`);
  try {
    if (createPrivateKey(parsed.private_key).asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    return unusable(`${named} is a service-account key that holds no RSA private key`);
  }
  return { fetcher: new ServiceAccountTokens(parsed as ServiceAccountKey, timeoutMs) };
}
