import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startGatewayProcess, type GatewayProcess } from '../support/cloud-gateway-process';
import { eventually } from '../support/eventually';
import { VertexUpstream } from '../support/vertex-upstream';

/** A workload identity pool provider, as an `external_account` file's `audience` names it. */
const POOL_PROVIDER =
  '//iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/switchyard-pool/providers/switchyard-oidc';
/** What the workload's identity provider wrote to its token file (on GKE or EKS: a projected service-account token). */
const SUBJECT_TOKEN =
  'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c3dpdGNoeWFyZCJ9.c2lnbmVk';

/**
 * Vertex AI with workload identity federation: the backend's `credentialsFile` is an `external_account` file whose
 * subject token is read from a file and exchanged at the file's `token_url`, the Vertex stand-in's STS (which checks
 * the exchange by its own code), for the token Vertex is then called with. google-auth-library does the exchange;
 * it runs in the built gateway as a process of its own, as in production (in Jest's module sandbox the library's
 * HTTP client cannot load: it imports node-fetch dynamically).
 */
describe('Vertex AI with workload identity federation (external_account)', () => {
  jest.setTimeout(60_000);
  let vertex: VertexUpstream;
  let gw: GatewayProcess;
  let dir: string;
  let client: OpenAI;

  beforeAll(async () => {
    vertex = await new VertexUpstream(37).start();
    vertex.trustSubjectToken(POOL_PROVIDER, SUBJECT_TOKEN);
    dir = mkdtempSync(join(tmpdir(), 'vertex-wif-'));
    const trusted = mkdtempSync(join(dir, 'trusted-'));
    writeFileSync(join(trusted, 'token'), SUBJECT_TOKEN);
    const stranger = mkdtempSync(join(dir, 'stranger-'));
    writeFileSync(join(stranger, 'token'), 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzb21lb25lLWVsc2UifQ.c2lnbmVk');
    const backend = (credentialsFile: string) => ({
      type: 'vertex',
      project: vertex.project,
      region: 'us-east5',
      baseUrl: vertex.url,
      credentialsFile,
    });
    gw = await startGatewayProcess({
      team: 'wif-team',
      backends: {
        'vertex-wif': backend(
          vertex.writeExternalAccountFile(trusted, POOL_PROVIDER, join(trusted, 'token')),
        ),
        'vertex-stranger': backend(
          vertex.writeExternalAccountFile(stranger, POOL_PROVIDER, join(stranger, 'token')),
        ),
      },
      models: {
        gemini: { backend: 'vertex-wif', upstreamModel: 'gemini-echo' },
        'gemini-stranger': { backend: 'vertex-stranger', upstreamModel: 'gemini-echo' },
      },
    });
    client = new OpenAI({ apiKey: gw.token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await gw?.stop();
    await vertex?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("exchanges the file's subject token at the file's token_url (STS) and calls Vertex with the token it issued", async () => {
    const reply = await client.chat.completions.create({
      model: 'gemini',
      messages: [{ role: 'user', content: 'hello from a workload' }],
    });
    expect(reply.choices[0].message.content).toBe('echo: hello from a workload');
    expect(vertex.exchanges).toEqual([
      { audience: POOL_PROVIDER, subjectToken: SUBJECT_TOKEN, token: expect.stringMatching(/^ya29\.d\./) },
    ]);
    const call = vertex.modelCalls('gemini-echo').at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${vertex.exchanges[0].token}`);
    // No service-account grant: the token came from the exchange alone.
    expect(vertex.requests.filter((r) => r.path === '/token')).toHaveLength(0);
    // Kept: the next request exchanges nothing more.
    await client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'again' }] });
    expect(vertex.exchanges).toHaveLength(1);
  });

  it('a subject token STS refuses: a deployment fault asked once, not retried, Vertex never called, no token shown', async () => {
    const before = vertex.modelCalls().length;
    const failed = (await client.chat.completions
      .create({ model: 'gemini-stranger', messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e)) as { status: number; error: unknown };
    expect(failed.status).toBe(502);
    expect(failed.error).toMatchObject({
      code: 'upstream_auth_failed',
      message: 'Backend "vertex-stranger" could not get a Google access token.',
    });
    expect(vertex.refusedGrants).toEqual([
      'invalid_grant: The provided subject token is not valid for this pool provider.',
    ]);
    expect(vertex.modelCalls().length).toBe(before);
    // The operator reads STS's reason in the log; the subject token is in neither the answer nor the log.
    await eventually(() => expect(gw.gateway.output()).toContain('invalid_grant'));
    expect(gw.gateway.output()).not.toContain('eyJzdWIiOiJzb21lb25lLWVsc2UifQ');
    expect(JSON.stringify(failed.error)).not.toContain('eyJ');
  });
});
