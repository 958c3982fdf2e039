// LLM configuration: when the endpoint counts as configured, defaults, and named errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, DEFAULT_MODEL, loadConfig } from '../../src/config.ts';

test('no endpoint and no key: not configured, no model, defaults for the bounds', () => {
  const { llm } = loadConfig({});
  assert.deepEqual(llm, {
    configured: false,
    baseUrl: undefined,
    apiKey: undefined,
    model: undefined,
    timeoutMs: 60000,
    maxRetries: 2,
    maxOutputTokens: undefined,
  });
});

test('a base URL alone configures it (a local Ollama needs no key), with the default model', () => {
  const { llm } = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/' });
  assert.equal(llm.configured, true);
  assert.equal(llm.baseUrl, 'http://127.0.0.1:11434/v1', 'trailing slash dropped');
  assert.equal(llm.apiKey, undefined);
  assert.equal(llm.model, DEFAULT_MODEL);
});

test('a key alone configures it; values are typed', () => {
  const { llm } = loadConfig({
    OPENAI_API_KEY: 'sk-x',
    MODEL_NAME: 'llama3.1:8b',
    LLM_TIMEOUT_MS: '5000',
    LLM_MAX_RETRIES: '0',
    LLM_MAX_OUTPUT_TOKENS: '1024',
    OPENAI_BASE_URL: '',
  });
  assert.deepEqual(llm, {
    configured: true,
    baseUrl: undefined,
    apiKey: 'sk-x',
    model: 'llama3.1:8b',
    timeoutMs: 5000,
    maxRetries: 0,
    maxOutputTokens: 1024,
  });
});

test('wrong values are ConfigErrors naming the variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ OPENAI_BASE_URL: 'ftp://x/v1' }, 'OPENAI_BASE_URL'],
    [{ OPENAI_BASE_URL: 'not a url' }, 'OPENAI_BASE_URL'],
    [{ LLM_TIMEOUT_MS: '10' }, 'LLM_TIMEOUT_MS'],
    [{ LLM_TIMEOUT_MS: 'soon' }, 'LLM_TIMEOUT_MS'],
    [{ LLM_MAX_RETRIES: '-1' }, 'LLM_MAX_RETRIES'],
    [{ LLM_MAX_RETRIES: '11' }, 'LLM_MAX_RETRIES'],
    [{ LLM_MAX_OUTPUT_TOKENS: '1.5' }, 'LLM_MAX_OUTPUT_TOKENS'],
    // A model without an endpoint would silently use the deterministic extractors.
    [{ MODEL_NAME: 'gpt-4o' }, 'MODEL_NAME'],
  ];
  for (const [env, variable] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) =>
        err instanceof ConfigError && err.variables.includes(variable) && err.message.includes(variable),
      JSON.stringify(env),
    );
  }
});
