/**
 * `ledgerloop replay`: replays every history JSON it is given (files, or folders searched recursively) against a
 * freshly built workflow bundle. One line per file; exits 1 on any determinism error or unreadable fixture. This is
 * what CI runs on test/replay/histories.
 */
import { workflowIdOfHistory } from '../../host/client/history-workflow-id';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '../../host/client/history-json';
import type { temporal } from '@temporalio/proto';
import type { Command } from 'commander';
import { cliDataConverter } from '../../src/codec/demo-key';
import { checkHistoryTools, ReplayToolsMissingError } from '../../host/client/history-tools';
import { CliUsageError, EXIT_FAILED, withCodecHint } from '../errors';
import { addConfigOption, commandProject, type ProjectFlags } from '../project';
import { formatElapsed, withProgress } from '../progress';
import { configureCommand, printJson, runAction, type CommandIO } from './shared';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded when `replay` runs, not when any command starts */
const toolsModule = () => require('../../host/worker/tools-module') as typeof import('../../host/worker/tools-module');
const builtins = () => require('../../src/tools/registry') as typeof import('../../src/tools/registry');
const workerPackage = () => require('@temporalio/worker') as typeof import('@temporalio/worker');
const bundler = () => require('../../host/worker/bundle') as typeof import('../../host/worker/bundle');
const logging = () => require('../../src/observability/logger') as typeof import('../../src/observability/logger');
/* eslint-enable @typescript-eslint/no-require-imports */

interface ReplayFlags extends ProjectFlags {
  readonly workflows?: string;
  readonly tools?: string;
  readonly json: boolean;
}

/** The tools the bundle carries: their module (undefined: the built-in tools), names, and how to name them. */
interface BundleTools {
  readonly module?: string;
  readonly names: readonly string[];
  readonly label: string;
}

/** `--tools`, else the project's tools module, else the built-in tools; a module that cannot be used is bad input. */
async function bundleTools(flags: ReplayFlags): Promise<BundleTools> {
  const project = await commandProject(flags);
  const module = flags.tools !== undefined ? path.resolve(flags.tools) : project?.tools;
  if (module === undefined) return { names: builtins().builtinTools.names(), label: 'the built-in tools' };
  try {
    return { module, names: toolsModule().loadToolsModule(module).names(), label: module };
  } catch (err) {
    throw new CliUsageError(
      `${flags.tools !== undefined ? '--tools' : 'the project config'}: ${(err as Error).message}`,
    );
  }
}

export interface ReplayOutcome {
  readonly file: string;
  readonly ok: boolean;
  readonly events?: number;
  readonly ms: number;
  /** The error class (DeterminismViolationError, ReplayError, SyntaxError, ...). */
  readonly error?: string;
  readonly message?: string;
}

function jsonFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((d) => {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) return jsonFilesUnder(p);
      return d.isFile() && d.name.endsWith('.json') ? [p] : [];
    });
}

/** The history files named by `paths`: files as given, folders searched recursively for `*.json`. */
export function collectHistoryFiles(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new CliUsageError(`no such file or folder: ${p}`);
    }
    const found = isDir ? jsonFilesUnder(p) : [p];
    if (found.length === 0) throw new CliUsageError(`no history JSON files under ${p}`);
    files.push(...found);
  }
  return [...new Set(files)];
}

function quietRuntime(): void {
  // Core's own logs are silenced too: the outcome lines already say what failed.
  logging().installRuntimeLogger({ component: 'replay', level: 'OFF', coreLevel: 'ERROR' });
}

/** The core's nondeterminism message is buried in a Rust debug dump: keep its `message: "..."` part. */
export function briefly(message: string): string {
  const inner = /message: "([^"]+)"/.exec(message)?.[1];
  return (inner ?? message).split('\n')[0]!;
}

/**
 * Replays one file against the bundle `bundle()` gives (built on first use, so that a run whose every history is
 * refused before replay, unreadable or using tools the bundle lacks, builds none).
 */
async function replayOne(
  file: string,
  bundle: () => Promise<{ code: string }>,
  tools: BundleTools,
): Promise<ReplayOutcome> {
  const started = Date.now();
  const label = path.relative(process.cwd(), file) || file;
  const fail = (error: string, message: string, events?: number): ReplayOutcome => ({
    file: label,
    ok: false,
    ms: Date.now() - started,
    error,
    message: briefly(message),
    ...(events !== undefined ? { events } : {}),
  });
  let history: temporal.api.history.v1.IHistory;
  try {
    history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    return fail((err as Error).name, `not a history JSON file: ${(err as Error).message}`);
  }
  const events = history.events?.length ?? 0;
  const dataConverter = cliDataConverter(() => undefined);
  try {
    // A history whose tools the bundle lacks would only fail as a determinism error that names no tool.
    await checkHistoryTools(history, tools.names, tools.label, dataConverter);
  } catch (err) {
    if (err instanceof ReplayToolsMissingError) return fail(err.name, err.message, events);
    throw err;
  }
  const workflowBundle = await bundle();
  try {
    // Replay under the id the run had: its logical call ids and keys derive from it.
    const workflowId = (await workflowIdOfHistory(history, dataConverter)) ?? label;
    const { Worker } = workerPackage();
    await Worker.runReplayHistory(
      { workflowBundle, ...(dataConverter ? { dataConverter } : {}), replayName: 'ledgerloop-replay' },
      history,
      workflowId,
    );
  } catch (err) {
    return fail((err as Error).name || 'Error', withCodecHint((err as Error).message), events);
  }
  return { file: label, ok: true, events, ms: Date.now() - started };
}

/** `✓ test/replay/histories/v1/turn-budget.json  (53 events, 180ms)` or `✗ file  DeterminismViolationError: …`. */
export function replayLine(o: ReplayOutcome): string {
  if (o.ok) return `✓ ${o.file}  (${o.events} events, ${formatElapsed(o.ms)})`;
  return `✗ ${o.file}  ${o.error}: ${o.message}`;
}

export function registerReplay(program: Command, io: CommandIO): void {
  const cmd = program
    .command('replay')
    .description(
      'replay history JSON files (or every *.json under folders) against a fresh workflow bundle; exit 1 on any failure',
    )
    .argument('<paths...>', 'history files or folders')
    .option('--workflows <file>', 'the workflows entry to bundle (default workflows/index.ts)')
    .option(
      '--tools <module>',
      'the tools module the runs’ workers had (exports workflowTools); default the project config’s, else the built-in tools',
    )
    .option('--json', 'print a JSON array of outcomes', false);
  addConfigOption(cmd);
  configureCommand(cmd, io);
  cmd.action((paths: string[], flags: ReplayFlags) =>
    runAction(cmd, io, async () => {
      const files = collectHistoryFiles(paths);
      const { buildWorkflowBundle, WORKFLOWS_PATH } = bundler();
      const workflowsPath = flags.workflows !== undefined ? path.resolve(flags.workflows) : WORKFLOWS_PATH;
      try {
        statSync(workflowsPath);
      } catch {
        throw new CliUsageError(`--workflows: no such file: ${flags.workflows}`);
      }
      const tools = await bundleTools(flags);
      quietRuntime();
      let built: Promise<{ code: string }> | undefined;
      const bundle = (): Promise<{ code: string }> =>
        (built ??= withProgress(
          `bundling the workflow code with ${tools.module === undefined ? 'the built-in tools' : `the tools of ${path.relative(process.cwd(), tools.module) || tools.module}`}`,
          () =>
            buildWorkflowBundle({
              workflowsPath,
              ...(tools.module !== undefined ? { toolsModule: tools.module } : {}),
            }),
          { stream: io.err },
        ));
      const outcomes: ReplayOutcome[] = [];
      for (const file of files) {
        const o = await replayOne(file, bundle, tools);
        outcomes.push(o);
        if (!flags.json) io.out(`${replayLine(o)}\n`);
      }
      const failed = outcomes.filter((o) => !o.ok).length;
      if (flags.json) printJson(io, outcomes);
      else io.out(`${outcomes.length - failed} replayed, ${failed} failed\n`);
      return failed > 0 ? EXIT_FAILED : 0;
    }),
  );
}
