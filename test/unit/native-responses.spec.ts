import { speaksResponses } from '../../src/endpoints/responses/native-responses';
import type { NativeApi, ProviderAdapter } from '../../src/providers/provider-adapter';
import type { Deployment } from '../../src/routing/model-router.service';

/** A deployment on a backend whose adapter lists `apis` and, if given, decides per model. */
function deployment(
  upstreamModel: string,
  apis: readonly NativeApi[] | undefined,
  perModel?: (api: NativeApi, model: string) => boolean,
): Deployment {
  const adapter = { nativeApis: apis, ...(perModel ? { speaksNatively: perModel } : {}) } as ProviderAdapter;
  return { upstreamModel, backend: { id: 'b', adapter } } as unknown as Deployment;
}

describe('speaksResponses: whether the Responses API goes to a deployment as it is', () => {
  it("follows the backend's nativeApis", () => {
    expect(speaksResponses(deployment('m', ['responses']))).toBe(true);
    expect(speaksResponses(deployment('m', ['messages']))).toBe(false);
    expect(speaksResponses(deployment('m', undefined))).toBe(false);
  });

  it('asks the adapter per upstream model where that differs by model (as speaksNatively does)', () => {
    const onlyNew = (api: NativeApi, model: string) => api === 'responses' && model.startsWith('new-');
    expect(speaksResponses(deployment('new-model', ['responses'], onlyNew))).toBe(true);
    expect(speaksResponses(deployment('old-model', ['responses'], onlyNew))).toBe(false);
  });
});
