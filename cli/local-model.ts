/**
 * The local-model lab (lab/local-model, packages/local-model with node-llama-cpp) belongs to the repository, not to
 * the installed package: its commands are registered, and `demo --model local` runs, only where its sources are.
 * Loaded by path, so the package build (tsconfig.build.json) does not follow it.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded only where it exists */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { packageModule } from '../src/package-paths';

export function registerLocalModelCommands(program: Command): void {
  const file = packageModule('lab', 'local-model', 'cli');
  if (!existsSync(file)) return;
  (require(file) as { registerModelCommands(program: Command): void }).registerModelCommands(program);
}

export async function runLocalModelDemo(kind: string, opts: { readonly once: boolean }): Promise<number> {
  const file = packageModule('lab', 'local-model', 'demo');
  if (!existsSync(file)) {
    process.stderr.write('ledgerloop demo: --model local runs from a clone of the repository, not the package\n');
    return 2;
  }
  return (
    require(file) as { runModelDemo(kind: string, opts: { readonly once: boolean }): Promise<number> }
  ).runModelDemo(kind, opts);
}
