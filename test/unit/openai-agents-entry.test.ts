/**
 * The parts of `ledgerloop/openai-agents` that need no server: the sandbox's `structuredClone` (what it copies and
 * what it refuses), the model activity's retry owner (a refusal that repeating cannot change is non-retryable; a
 * transient failure is left to Temporal), and the webpack changes the plugin makes.
 */
import { Usage, type Model, type ModelProvider, type ModelResponse } from '@openai/agents-core';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  AGENTS_MODEL_REFUSED,
  agentsWebpackConfig,
  createAgentsModelActivities,
  type AgentsModelAnswer,
} from 'ledgerloop/openai-agents';
import { DataCloneError } from 'ledgerloop/openai-agents/workflow';
import { sandboxStructuredClone } from '../../workflows/openai-agents/structured-clone';

describe('the sandbox structuredClone', () => {
  test('copies plain data deeply, keeping shared and cyclic references', () => {
    const shared = { pattern: '^a$' };
    const value: Record<string, unknown> = {
      type: 'object',
      properties: { a: shared, b: shared },
      required: ['a'],
      when: new Date(0),
      re: /x+/gi,
      map: new Map([['k', [1, 2]]]),
      set: new Set(['s']),
      none: null,
      missing: undefined,
    };
    value['self'] = value;
    const copy = sandboxStructuredClone(value);
    expect(copy).not.toBe(value);
    expect(copy['properties']).not.toBe(value['properties']);
    const props = copy['properties'] as Record<string, unknown>;
    expect(props['a']).toBe(props['b']);
    expect(props['a']).not.toBe(shared);
    expect(copy['self']).toBe(copy);
    expect(copy['when']).toEqual(new Date(0));
    expect((copy['re'] as RegExp).flags).toBe('gi');
    expect(copy['map']).toEqual(new Map([['k', [1, 2]]]));
    expect('missing' in copy).toBe(true);
    // The same result as Node's own, for what both can copy.
    const { self: _s, ...acyclic } = value;
    expect(sandboxStructuredClone(acyclic)).toEqual(structuredClone(acyclic));
  });

  test('refuses what the structured clone algorithm refuses, with a DataCloneError', () => {
    expect(() => sandboxStructuredClone({ f: () => 1 })).toThrow(DataCloneError);
    expect(() => sandboxStructuredClone([Symbol('s')])).toThrow(DataCloneError);
    expect(() => sandboxStructuredClone(new (class Custom {})())).toThrow(/Custom could not be cloned/);
    expect(() => sandboxStructuredClone({}, { transfer: [new ArrayBuffer(1)] })).toThrow(DataCloneError);
    // Control: the same shapes without the refused part copy.
    expect(sandboxStructuredClone({ f: 1 })).toEqual({ f: 1 });
  });
});

function providerThrowing(error: unknown): ModelProvider {
  const model: Model = {
    getResponse: () => Promise.reject(error),
    getStreamedResponse: () => {
      throw new Error('unused');
    },
  };
  return { getModel: () => model };
}

const answer: ModelResponse = {
  output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi' }] }],
  usage: new Usage({ requests: 1, inputTokens: 3, outputTokens: 1, totalTokens: 4 }),
};

async function invoke(provider: ModelProvider): Promise<AgentsModelAnswer> {
  const { invokeAgentsModel } = createAgentsModelActivities(provider);
  return new MockActivityEnvironment().run(invokeAgentsModel, { modelName: 'm', request: {} as never });
}

describe('the model activity', () => {
  test.each([400, 401, 403, 404, 422])(
    'an HTTP %i from the provider is a non-retryable AgentsModel.Refused',
    async (status) => {
      const failure = await invoke(providerThrowing(Object.assign(new Error('no'), { status }))).catch((e) => e);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: AGENTS_MODEL_REFUSED, nonRetryable: true });
    },
  );

  test.each([408, 409, 429, 500, 503])('an HTTP %i is left to the retry policy', async (status) => {
    const error = Object.assign(new Error('busy'), { status });
    await expect(invoke(providerThrowing(error))).rejects.toBe(error);
  });

  test('an error with no status (a lost connection) is left to the retry policy', async () => {
    const error = new Error('socket hang up');
    await expect(invoke(providerThrowing(error))).rejects.toBe(error);
  });

  test('an answer crosses as plain data, its usage included', async () => {
    const model: Model = { getResponse: async () => answer, getStreamedResponse: () => [][Symbol.iterator]() as never };
    const provider: ModelProvider = { getModel: () => model };
    const out = await invoke(provider);
    expect(out.output).toEqual(answer.output);
    expect(Usage.fromJSON(out.usage as never)).toMatchObject({ requests: 1, inputTokens: 3, totalTokens: 4 });
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
  });
});

describe('the bundle changes', () => {
  test('the globals come first, dynamic imports are eager, the workflow entry resolves to the package file', () => {
    const config = agentsWebpackConfig({ entry: ['/user/workflows.js'], resolve: { alias: { mine: '/m.js' } } });
    const entry = config.entry as string[];
    expect(entry).toHaveLength(2);
    expect(entry[0]).toMatch(/workflows[/\\]openai-agents[/\\]sandbox-globals\.(ts|js)$/);
    expect(entry[1]).toBe('/user/workflows.js');
    expect(config.module?.parser?.javascript?.dynamicImportMode).toBe('eager');
    const alias = config.resolve?.alias as Record<string, string>;
    expect(alias['mine']).toBe('/m.js');
    expect(alias['ledgerloop/openai-agents/workflow$']).toMatch(/workflows[/\\]openai-agents[/\\]index\.(ts|js)$/);
    // Control: with the parts off, the configuration is the caller's.
    const off = agentsWebpackConfig({ entry: ['/user/workflows.js'] }, { globals: false, eagerImports: false });
    expect(off.entry).toEqual(['/user/workflows.js']);
    expect(off.module?.parser?.javascript?.dynamicImportMode).toBeUndefined();
  });
});
