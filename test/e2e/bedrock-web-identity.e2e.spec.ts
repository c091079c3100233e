import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { AwsStsUpstream } from '../support/aws-sts-upstream';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { startGatewayProcess, type GatewayProcess } from '../support/cloud-gateway-process';
import { eventually } from '../support/eventually';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/switchyard-gateway';
/** What EKS projects into the pod: a service-account token its OIDC provider signed. */
const WEB_IDENTITY_TOKEN =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6ImVrcyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c3dpdGNoeWFyZDpnYXRld2F5In0.c2lnbmVk';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';

/**
 * Bedrock with web identity, as on EKS (IAM roles for service accounts): the gateway process has no AWS keys, only
 * AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (what EKS's pod identity webhook sets), and the default credential
 * chain calls STS AssumeRoleWithWebIdentity, reached at a stand-in through AWS_ENDPOINT_URL_STS (the SDK's
 * service-specific endpoint variable), for temporary credentials; the Bedrock stand-in accepts only those (checking
 * the SigV4 signature and X-Amz-Security-Token with its own code). The chain reads the process's environment, so
 * the built gateway runs as a process of its own with that environment.
 */
describe('AWS Bedrock with web identity (EKS IAM roles for service accounts)', () => {
  jest.setTimeout(60_000);
  let bedrock: BedrockUpstream;
  let sts: AwsStsUpstream;
  let gw: GatewayProcess;
  let dir: string;
  let tokenFile: string;
  let client: OpenAI;

  beforeAll(async () => {
    bedrock = await new BedrockUpstream({ keys: [] }).start();
    sts = await new AwsStsUpstream((key) => bedrock.keys.push(key)).start();
    sts.trust(ROLE_ARN, WEB_IDENTITY_TOKEN);
    dir = mkdtempSync(join(tmpdir(), 'bedrock-web-identity-'));
    tokenFile = join(dir, 'token');
    // A token the role does not trust, until a test writes the right one (as the kubelet rotates it).
    writeFileSync(tokenFile, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzb21lb25lLWVsc2UifQ.c2lnbmVk');
    gw = await startGatewayProcess({
      team: 'eks-team',
      backends: { aws: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url } },
      models: { llama: { backend: 'aws', upstreamModel: LLAMA } },
      env: {
        AWS_ROLE_ARN: ROLE_ARN,
        AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_STS: sts.url,
        // Nothing else the chain could fall back on.
        AWS_CONFIG_FILE: join(dir, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
        AWS_EC2_METADATA_DISABLED: 'true',
      },
    });
    client = new OpenAI({ apiKey: gw.token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await gw?.stop();
    await Promise.all([bedrock?.stop(), sts?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ask = (content: string) =>
    client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content }] });

  it('a token STS refuses: 502 upstream_auth_failed, Bedrock never called, the token shown nowhere', async () => {
    const failed = (await ask('hello').catch((e: unknown) => e)) as { status: number; error: unknown };
    expect(sts.refused).toContainEqual(expect.stringMatching(/^InvalidIdentityToken: /));
    expect(failed.status).toBe(502);
    expect(failed.error).toMatchObject({ code: 'upstream_auth_failed' });
    expect(bedrock.requests).toHaveLength(0);
    await eventually(() =>
      expect(gw.gateway.output()).toContain('no AWS credentials from the default chain'),
    );
    expect(gw.gateway.output()).not.toContain('eyJzdWIiOiJzb21lb25lLWVsc2UifQ');
  });

  it("the role's token: AssumeRoleWithWebIdentity at AWS_ENDPOINT_URL_STS, Bedrock called signed with the temporary credentials", async () => {
    writeFileSync(tokenFile, WEB_IDENTITY_TOKEN);
    const reply = await ask('hello from a pod');
    expect(reply.choices[0].message.content).toContain('hello from a pod');
    expect(sts.granted).toHaveLength(1);
    const { roleArn, sessionName, key } = sts.granted[0];
    expect(roleArn).toBe(ROLE_ARN);
    expect(sessionName).toMatch(/^aws-sdk-js-session-\d+$/); // EKS sets no AWS_ROLE_SESSION_NAME
    const call = bedrock.last();
    expect(call.path).toBe(`/model/${encodeURIComponent(LLAMA)}/converse`);
    expect(bedrock.signedBy.at(-1)).toBe(key.accessKeyId);
    expect(call.headers['x-amz-security-token']).toBe(key.sessionToken);
    expect(String(call.headers.authorization)).toContain(`Credential=${key.accessKeyId}/`);
    // Kept until they near expiry: the next request asks STS nothing.
    await ask('again');
    expect(sts.granted).toHaveLength(1);
    expect(bedrock.signedBy.at(-1)).toBe(key.accessKeyId);
    // The temporary credentials never reach the log.
    expect(gw.gateway.output()).not.toContain(key.secretAccessKey);
    expect(gw.gateway.output()).not.toContain(key.sessionToken);
  });
});
