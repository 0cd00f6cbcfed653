import { z } from 'zod';
import { chatCompletionTools, functionTool } from '../../src/planner/tool-schemas';
import { defineTool } from '../../src/domain/tool';
import { builtinTools, ToolRegistry } from '../../src/tools/registry';
import { walletDebit } from '../../src/tools/wallet.tool';

describe('Chat Completions tools derived from the zod argument schemas', () => {
  const debit = chatCompletionTools().find((t) => t.function.name === 'wallet_debit');

  test('the built-in registry yields one function tool per declaration, named as declared', () => {
    const tools = chatCompletionTools();
    expect(tools.map((t) => t.function.name)).toEqual(builtinTools.names());
    expect(tools.every((t) => t.type === 'function')).toBe(true);
    expect(debit?.function.description).toBe(walletDebit.description);
  });

  test('wallet_debit requires account and amount, leaves memo optional and forbids extra properties', () => {
    const params = debit?.function.parameters as Record<string, unknown>;
    expect(params.type).toBe('object');
    expect(params.required).toEqual(['account', 'amount']);
    expect(params.additionalProperties).toBe(false);
    expect(Object.keys(params.properties as object).sort()).toEqual(['account', 'amount', 'memo']);
  });

  test('nested money is an integer minor amount plus a currency, also closed to extra properties', () => {
    const amount = (debit?.function.parameters as { properties: Record<string, Record<string, unknown>> }).properties
      .amount;
    expect(amount).toMatchObject({
      type: 'object',
      required: ['minor', 'currency'],
      additionalProperties: false,
      properties: { minor: { type: 'integer' }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
    });
  });

  test('the parameters carry no $schema dialect marker', () => {
    expect(debit?.function.parameters).not.toHaveProperty('$schema');
  });

  test('a declaration whose arguments are not an object is refused', () => {
    const odd = defineTool({ ...walletDebit, name: 'odd', args: z.string() as never });
    expect(() => functionTool(odd)).toThrow(/JSON object schema/);
  });

  test('a registry change is reflected without editing any schema by hand', () => {
    const extra = defineTool({ ...walletDebit, name: 'wallet_extra', description: 'Another tool.' });
    const names = chatCompletionTools(new ToolRegistry([walletDebit, extra])).map((t) => t.function.name);
    expect(names).toEqual(['wallet_debit', 'wallet_extra']);
  });
});
