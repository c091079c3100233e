import { randomId } from '../../src/providers/local/local-ids';

describe('local model ids', () => {
  it("are random in OpenAI's alphabet and length, never a counter", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => randomId('chatcmpl-', 29)));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(randomId('call_', 24)).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });
});
