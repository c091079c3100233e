import { compileModelGlobs } from '../../src/routing/model-glob';

describe('model globs', () => {
  it('matches exact names, * anywhere (across "/"), and nothing else', () => {
    const allows = compileModelGlobs(['gpt-4o', 'claude-*', 'meta-llama/*', '*-mini']);
    expect(allows('gpt-4o')).toBe(true);
    expect(allows('gpt-4o-2024')).toBe(false);
    expect(allows('claude-sonnet-4')).toBe(true);
    expect(allows('meta-llama/Llama-3.1-8B')).toBe(true);
    expect(allows('o4-mini')).toBe(true);
    expect(allows('gemini-pro')).toBe(false);
  });

  it('treats regex characters in names literally', () => {
    const allows = compileModelGlobs(['qwen2.5*']);
    expect(allows('qwen2.5-7b')).toBe(true);
    expect(allows('qwen2x5-7b')).toBe(false);
  });

  it('"*" allows everything and [] allows nothing', () => {
    expect(compileModelGlobs(['*'])('anything/at:all')).toBe(true);
    expect(compileModelGlobs([])('gpt-4o')).toBe(false);
  });
});
