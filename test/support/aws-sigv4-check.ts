import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * AWS Signature Version 4 checked the way AWS documents it ("Create a signed AWS API request", IAM user guide), by
 * this test's own code rather than the signer the gateway uses: the canonical request (method, the path with each
 * segment URI-encoded once more, the sorted query, the signed headers' trimmed values, the payload's SHA-256), the
 * string to sign over its hash with the credential scope, and the HMAC chain of the signing key. A stand-in that
 * verifies with the same library that signed would pass a bug both share.
 */
export interface AwsKey {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials' token: required (and signed) when set. */
  sessionToken?: string;
}

export type SigV4Verdict =
  { ok: true; accessKeyId: string } | { ok: false; status: number; errorType: string; message: string };

/** Bedrock's words when the recomputed signature differs (what its 403 InvalidSignatureException says). */
export const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

const AUTH_PATTERN =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters, `%XX` upper case. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function verifySigV4(options: {
  method: string;
  /** The request target as it arrived (path and query, still escaped). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  keys: AwsKey[];
  region: string;
  service: string;
  now?: Date;
}): SigV4Verdict {
  const authorization = options.headers.authorization;
  if (!authorization)
    return {
      ok: false,
      status: 403,
      errorType: 'MissingAuthenticationTokenException',
      message: 'Missing Authentication Token',
    };
  const match = AUTH_PATTERN.exec(authorization);
  if (!match)
    return {
      ok: false,
      status: 403,
      errorType: 'IncompleteSignatureException',
      message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.`,
    };
  const [, accessKeyId, date, region, service, signedHeaderList, signature] = match;
  const key = options.keys.find((k) => k.accessKeyId === accessKeyId);
  if (!key)
    return {
      ok: false,
      status: 403,
      errorType: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  const amzDate = String(options.headers['x-amz-date'] ?? '');
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date)
    return { ok: false, status: 403, errorType: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
  const at = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  if (Math.abs((options.now ?? new Date()).getTime() - at) > 5 * 60_000)
    return {
      ok: false,
      status: 403,
      errorType: 'InvalidSignatureException',
      message: `Signature expired: ${amzDate} is now earlier than the allowed window.`,
    };
  if (region !== options.region || service !== options.service)
    return {
      ok: false,
      status: 403,
      errorType: 'InvalidSignatureException',
      message: `Credential should be scoped to a valid region and service '${options.service}'.`,
    };
  const signedHeaders = signedHeaderList.split(';');
  if (
    !signedHeaders.includes('host') ||
    (key.sessionToken && !signedHeaders.includes('x-amz-security-token'))
  )
    return { ok: false, status: 403, errorType: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
  if (key.sessionToken && options.headers['x-amz-security-token'] !== key.sessionToken)
    return {
      ok: false,
      status: 403,
      errorType: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };

  const [rawPath, rawQuery = ''] = options.url.split('?');
  const canonicalUri = rawPath
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
  const canonicalQuery = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=').map((part) => uriEncode(decodeURIComponent(part ?? ''))))
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value = '']) => `${name}=${value}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .map((name) => {
      const value = options.headers[name];
      const text = Array.isArray(value) ? value.join(',') : (value ?? '');
      return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonicalRequest = [
    options.method,
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    signedHeaderList,
    sha256(options.body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${key.secretAccessKey}`, date), region), service),
    'aws4_request',
  );
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex')))
    // As AWS answers a mismatch: what it computed follows the message (the session token's header included).
    return {
      ok: false,
      status: 403,
      errorType: 'InvalidSignatureException',
      message: `${SIGNATURE_MISMATCH}\n\nThe Canonical String for this request should have been\n'${canonicalRequest}'\n\nThe String-to-Sign should have been\n'${stringToSign}'\n`,
    };
  return { ok: true, accessKeyId };
}
