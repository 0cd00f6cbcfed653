/** `ledgerloop start`: start an agent run (scripted or OpenAI) and print its workflow id, or its result with --wait. */
import { readToken } from '../../src/identity/issue';
import { existsSync, readFileSync } from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { startAgentRun } from '../../host/client/runs';
import { newRunWorkflowId, RunIdError, tenantOfWorkflowId } from '../../host/client/run-ids';
import type { AgentRunResult } from '../../src/domain/run';
import { scenarios } from '../../lab/scenarios';
import { DEFAULT_TASK_QUEUE } from '../../host/client/runs';
import { addConnectionOptions, withSession, type ConnectionFlags } from '../connect';
import { CliUsageError, OperationRefusedError } from '../errors';
import { renderTable } from '../format';
import { collect, parseNonEmpty } from '../parse';
import { withProgress } from '../progress';
import { buildRunInput, START_DEFAULTS, type StartInputFlags } from '../run-input';
import { arg, configureCommand, printJson, runAction, type CommandIO } from './shared';
import { addAllowInClearOption, guardCommandToken, tokenForCommand } from './call-command';
import { commandProject, type ProjectFlags } from '../project';
import type { ProjectConfig } from '../../host/project/config';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only for a project's run */
const projectModels = () =>
  require('../../host/project/worker-options') as typeof import('../../host/project/worker-options');
const projectKeys = () => require('../../host/project/keys') as typeof import('../../host/project/keys');
/* eslint-enable @typescript-eslint/no-require-imports */

/** The scenarios `--scenario` may name: the project's scripted model's, else the built-in ones. */
async function knownScenarios(project: ProjectConfig | undefined): Promise<string[]> {
  if (project === undefined) return Object.keys(scenarios);
  try {
    return (await projectModels().projectScenarioNames(project)) ?? [];
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

/**
 * For a project run without `--token` or LEDGERLOOP_IDENTITY_TOKEN: a token to start exactly this run, minted in
 * memory with the project's development issuer (`ledgerloop keys`), or undefined when it has none.
 */
async function projectStartToken(
  project: ProjectConfig | undefined,
  principal: { readonly id: string; readonly tenant: string },
  run: string,
  io: CommandIO,
): Promise<string | undefined> {
  if (project === undefined) return undefined;
  if (!existsSync(project.keys.devIssuerKey)) return undefined;
  io.err.write(
    `note: no --token: a development token for ${principal.id} of ${principal.tenant}, from the project's dev issuer (${project.keys.devIssuerKey})\n`,
  );
  try {
    return await projectKeys().mintDevToken(
      project.keys,
      { principal: principal.id, tenant: principal.tenant },
      { purpose: 'start', run },
    );
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

interface StartFlags extends Omit<StartInputFlags, 'vars'>, ConnectionFlags, ProjectFlags {
  /** The repeatable `--var` (commander names it after the flag). */
  readonly var: readonly string[];
  readonly taskQueue: string;
  readonly workflowId?: string;
  readonly wait: boolean;
  readonly json: boolean;
  /** The principal's identity token (`--token <jws|@file>`, else LEDGERLOOP_IDENTITY_TOKEN). */
  readonly token?: string;
  /** `--allow-token-in-clear`: send the token even without codec keys. */
  readonly allowTokenInClear?: boolean;
}

/** The variable the run principal's token is read from when `--token` is not given. */
export const IDENTITY_TOKEN_ENV = 'LEDGERLOOP_IDENTITY_TOKEN';

const redacted = <T extends object>(input: T): T => ({
  ...input,
  ...('identityToken' in input ? { identityToken: '(redacted)' } : {}),
});

/** `<tenant>:run-<time>-<random>` (host/client/run-ids.ts): the frontend's authorizer reads the tenant from it. */
export function newWorkflowId(tenant: string, nowMs: number): string {
  try {
    return newRunWorkflowId(tenant, nowMs);
  } catch (err) {
    if (err instanceof RunIdError) throw new CliUsageError(`--tenant: ${err.message}`);
    throw err;
  }
}

function printResult(io: CommandIO, workflowId: string, r: AgentRunResult): void {
  io.out(`${workflowId}: ${r.stopReason} (${r.detail})\n`);
  if (r.finalText) io.out(`final: ${r.finalText}\n`);
  io.out(`projection hash ${r.projectionHash} · ${r.eventCount} ledger events\n`);
  if (r.calls.length > 0) {
    const rows = r.calls.map((c) => [c.logicalCallId, c.toolName, c.state, c.operationKey ?? '', c.receipt ?? '']);
    io.out(`\n${renderTable(['CALL', 'TOOL', 'STATE', 'OPERATION KEY', 'RECEIPT'], rows)}\n`);
  }
}

export function registerStart(program: Command, io: CommandIO): void {
  const cmd = program
    .command('start')
    .description(
      'start an agent run: a scripted scenario (--scenario), a real model (--openai, or --goal alone with a project whose model is openai) or a run file (--input)',
    )
    .option(
      '--scenario <name>',
      `a scenario of the scripted model: the project config's scenarios module, else the built-in (${Object.keys(scenarios).join(', ')})`,
    )
    .option('--var <key=value>', 'a scenario variable; JSON values allowed, dotted keys nest (repeatable)', collect, [])
    .option('--input <file>', 'a JSON file in the AgentRunInput shape; flags override its fields')
    .option('--openai', 'plan with a real model through the worker’s OpenAI-compatible API', false)
    .option('--model <name>', 'model for --openai (default: the worker’s LEDGERLOOP_OPENAI_MODEL)')
    .option('--goal <text>', 'what the run should achieve (required with --openai)')
    .option(
      '--strategy <name>',
      `retry strategy: check_receipt or same_key_replay (default ${START_DEFAULTS.strategy})`,
    )
    .option('--principal <kind:name>', `who the run acts for (default ${START_DEFAULTS.principal})`)
    .option('--tenant <id>', `the principal’s tenant (default ${START_DEFAULTS.tenant})`)
    .option(
      '--deadline <duration|time>',
      `run deadline: a duration from now (60s, 10m) or an ISO time (default ${START_DEFAULTS.deadline})`,
    )
    .option(
      '--task-queue <name>',
      'task queue the workers poll (env LEDGERLOOP_TASK_QUEUE)',
      process.env.LEDGERLOOP_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    )
    .option(
      '--workflow-id <id>',
      'the run’s workflow id (default <tenant>:run-<time>-<random>: host/client/run-ids.ts)',
      arg((v) => parseNonEmpty(v, '--workflow-id')),
    )
    .option(
      '--token <jws|@file>',
      `the principal’s identity token (default env ${IDENTITY_TOKEN_ENV}); without a valid one the run ends authorization_denied`,
    )
    .option('--wait', 'wait for the run to finish and print its result', false)
    .option('--json', 'print JSON: {workflowId, runId, input} and with --wait the result', false);
  addAllowInClearOption(cmd);
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((flags: StartFlags) =>
    runAction(cmd, io, async () => {
      const nowMs = Date.now();
      const project = await commandProject(flags);
      // A project whose model is a real one: `--goal` alone is a run for it.
      const openaiByGoal =
        project !== undefined &&
        flags.goal !== undefined &&
        flags.scenario === undefined &&
        flags.input === undefined &&
        !flags.openai &&
        project.models.some((m) => m.kind === 'openai');
      const built = buildRunInput(
        { ...flags, vars: flags.var, ...(openaiByGoal ? { openai: true } : {}) },
        {
          readFile: (f) => readFileSync(f, 'utf8'),
          nowMs,
          knownScenarios: await knownScenarios(project),
        },
      );
      for (const w of built.warnings) io.err.write(`${w}\n`);
      const { input } = built;
      const workflowId = flags.workflowId ?? newWorkflowId(input.principal.tenant, nowMs);
      if (tenantOfWorkflowId(workflowId) !== input.principal.tenant)
        io.err.write(
          `note: ${workflowId} does not begin with ${input.principal.tenant}: (host/client/run-ids.ts); a Temporal frontend that authorizes refuses a starter's run under it\n`,
        );
      const presented = readToken(flags.token, process.env, IDENTITY_TOKEN_ENV);
      const minted =
        presented === undefined ? await projectStartToken(project, input.principal, workflowId, io) : undefined;
      if (presented === undefined && minted === undefined)
        io.err.write(`note: no --token or ${IDENTITY_TOKEN_ENV}: the run will end authorization_denied\n`);
      // A token to start exactly this run (src/identity/purpose.ts).
      const identityToken =
        minted ??
        (presented === undefined ? undefined : await tokenForCommand(presented, { purpose: 'start', run: workflowId }));
      return withSession({ ...flags, actorToken: identityToken }, workflowId, async (s) => {
        if (identityToken !== undefined)
          await guardCommandToken(s.dataConverter, 'your identity token', io.err, flags.allowTokenInClear);
        const handle = await startAgentRun(s.client, {
          workflowId,
          taskQueue: flags.taskQueue,
          input,
          ...(identityToken !== undefined ? { identityToken } : {}),
        });
        const started = {
          workflowId,
          runId: handle.firstExecutionRunId,
          taskQueue: flags.taskQueue,
          namespace: s.namespace,
        };
        if (!flags.wait) {
          if (flags.json) printJson(io, { ...started, input: redacted(input) });
          else io.out(`${workflowId}\n`);
          return 0;
        }
        if (!flags.json) io.err.write(`started ${workflowId} on task queue ${flags.taskQueue}\n`);
        let result: AgentRunResult;
        // No worker on the queue means waiting forever: say so within a few seconds, naming the queue.
        const watch = s.watchForWorker(flags.taskQueue, io.err);
        try {
          result = await withProgress(`waiting for ${workflowId}`, () => handle.result(), { stream: io.err });
        } catch (err) {
          if (err instanceof WorkflowFailedError) {
            throw new OperationRefusedError(
              `run ${workflowId} did not return a result: ${err.cause?.message ?? err.message}`,
            );
          }
          throw err;
        } finally {
          watch.stop();
        }
        if (flags.json) printJson(io, { ...started, input: redacted(input), result });
        else printResult(io, workflowId, result);
        return 0;
      });
    }),
  );
}
