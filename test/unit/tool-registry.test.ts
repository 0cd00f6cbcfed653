/** The tool registry loads a service's declarations the first time one of its tools is looked up. */
import type { AnyTool } from '../../src/domain/tool';
import { builtinTools, ToolRegistry, type ToolModule } from '../../src/tools/registry';
import { walletTools } from '../../src/tools/wallet.tool';

function counted(names: readonly string[], tools: readonly AnyTool[]): ToolModule & { loads: number } {
  const m = { names, loads: 0, load: () => (m.loads++, tools) };
  return m;
}

test('names are known without loading; the module loads once, on the first lookup of any of its tools', () => {
  const wallet = counted(['wallet_debit', 'wallet_refund'], walletTools);
  const reg = new ToolRegistry([], [wallet]);
  expect(reg.names()).toEqual(['wallet_debit', 'wallet_refund']);
  expect(wallet.loads).toBe(0);
  expect(reg.get('wallet_refund')?.name).toBe('wallet_refund');
  expect(reg.get('wallet_debit')?.name).toBe('wallet_debit');
  expect(wallet.loads).toBe(1);
  expect(reg.get('nope')).toBeUndefined();
  expect(wallet.loads).toBe(1);
});

test('a module that defines other tools than it declares is refused when it loads', () => {
  const reg = new ToolRegistry([], [counted(['wallet_debit', 'wallet_typo'], walletTools)]);
  expect(() => reg.get('wallet_debit')).toThrow(
    /declares \[wallet_debit, wallet_typo\] but defines \[wallet_debit, wallet_refund\]/,
  );
});

test('a name declared twice is refused up front', () => {
  expect(() => new ToolRegistry([walletTools[0]], [counted(['wallet_debit'], [walletTools[0]])])).toThrow(
    /duplicate tool name wallet_debit/,
  );
});

test('every built-in tool module declares exactly what it defines', () => {
  for (const name of builtinTools.names()) expect(builtinTools.get(name)?.name).toBe(name);
  expect(builtinTools.names()).toHaveLength(8);
});
