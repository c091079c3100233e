import type { ServerResponse } from 'node:http';
import type { AwsKey } from './aws-sigv4-check';
import { StandInServer, type RecordedRequest } from './standin-server';

const STS_XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

/**
 * A stand-in AWS Security Token Service for web identity federation (EKS's IAM roles for service accounts), written
 * from the STS API reference, AssumeRoleWithWebIdentity: the Query API, `POST /` with the form `Action=
 * AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=...&RoleSessionName=...&WebIdentityToken=...` (the call is
 * not signed: the web identity token is the credential). The token must be one `trust` registered for the role
 * (checked here by equality: the stand-in is also the OIDC provider the role trusts); the answer is the documented
 * XML `AssumeRoleWithWebIdentityResponse` with `Credentials` (AccessKeyId, SecretAccessKey, SessionToken,
 * Expiration), or STS's XML `ErrorResponse` (400 InvalidIdentityToken, 403 AccessDenied for a role that does not
 * trust the provider, 400 for a malformed call). Each issued key is handed to `onIssue` (a Bedrock stand-in adds it
 * to the keys it accepts).
 */
export class AwsStsUpstream extends StandInServer {
  /** Lifetime of issued credentials, in seconds (STS's default is an hour). */
  durationSeconds = 3600;
  /** Every call granted: the role, the session name and the key issued. */
  readonly granted: Array<{ roleArn: string; sessionName: string; key: AwsKey }> = [];
  /** Every call refused, as `Code: Message`. */
  readonly refused: string[] = [];
  private readonly trusted = new Map<string, Set<string>>();

  constructor(
    private readonly onIssue: (key: AwsKey) => void,
    seed = 38,
  ) {
    super(seed);
  }

  get url(): string {
    return this.origin;
  }

  /** The role `roleArn` trusts `webIdentityToken` (its OIDC provider signed it). */
  trust(roleArn: string, webIdentityToken: string): void {
    const tokens = this.trusted.get(roleArn) ?? new Set<string>();
    tokens.add(webIdentityToken);
    this.trusted.set(roleArn, tokens);
  }

  protected handle(recorded: RecordedRequest, _req: unknown, res: ServerResponse): void {
    if (!String(recorded.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return this.error(res, 400, 'InvalidAction', 'Could not find operation for the request.');
    const form = new URLSearchParams(recorded.text);
    if (form.get('Action') !== 'AssumeRoleWithWebIdentity')
      return this.error(
        res,
        400,
        'InvalidAction',
        `Could not find operation ${form.get('Action') ?? ''} for version ${form.get('Version') ?? ''}`,
      );
    if (form.get('Version') !== '2011-06-15')
      return this.error(
        res,
        400,
        'InvalidAction',
        `Could not find operation for version ${form.get('Version') ?? ''}`,
      );
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    const token = form.get('WebIdentityToken') ?? '';
    if (!/^arn:aws:iam::\d{12}:role\/[\w+=,.@/-]+$/.test(roleArn))
      return this.error(res, 400, 'ValidationError', `${roleArn} is invalid`);
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName))
      return this.error(
        res,
        400,
        'ValidationError',
        "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint",
      );
    const tokens = this.trusted.get(roleArn);
    if (!tokens)
      return this.error(res, 403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
    if (!tokens.has(token))
      return this.error(
        res,
        400,
        'InvalidIdentityToken',
        "Couldn't retrieve verification key from your identity provider,  please reference AssumeRoleWithWebIdentity documentation for requirements",
      );
    const key: AwsKey = {
      accessKeyId: this.id('ASIA', 16),
      secretAccessKey: this.id('', 40),
      sessionToken: this.id('IQoJb3JpZ2luX2VjE', 120),
    };
    this.onIssue(key);
    this.granted.push({ roleArn, sessionName, key });
    const expiration = new Date(Date.now() + this.durationSeconds * 1000)
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': this.id('', 32) });
    res.end(`<AssumeRoleWithWebIdentityResponse xmlns="${STS_XMLNS}">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:switchyard:gateway</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>${roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/${sessionName}</Arn>
      <AssumedRoleId>AROA${this.id('', 17)}:${sessionName}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>${key.sessionToken}</SessionToken>
      <SecretAccessKey>${key.secretAccessKey}</SecretAccessKey>
      <Expiration>${expiration}</Expiration>
      <AccessKeyId>${key.accessKeyId}</AccessKeyId>
    </Credentials>
    <Provider>arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata>
    <RequestId>${this.id('', 32)}</RequestId>
  </ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>
`);
  }

  private error(res: ServerResponse, status: number, code: string, message: string): void {
    this.refused.push(`${code}: ${message}`);
    res.writeHead(status, { 'content-type': 'text/xml' });
    res.end(`<ErrorResponse xmlns="${STS_XMLNS}">
  <Error>
    <Type>Sender</Type>
    <Code>${code}</Code>
    <Message>${message}</Message>
  </Error>
  <RequestId>${this.id('', 32)}</RequestId>
</ErrorResponse>
`);
  }
}
