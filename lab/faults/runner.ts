/**
 * `ledgerloop faults <protocol.json> [--report <file.json>]`: validate the protocol (a bad file runs nothing),
 * print the plan, check the build has every feature the plan needs, run each case against fresh processes,
 * print progress per case, the table, the failures and the write-ups, and write the JSON report.
 * Exit code: 0 every assertion held, 1 some case failed, 2 the protocol could not run at all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCase, type CaseResult } from './case-runner';
import { CRASH_POINTS } from './catalog';
import { buildBundle, openLab, type BuiltBundle } from './lab';
import { formatPlan, planProtocol, type Plan } from './plan';
import {
  BUILTIN_VOCABULARY,
  loadProtocol,
  PROTOCOL_FORMAT,
  ProtocolFormatError,
  toolTargetsOf,
  type ProtocolVocabulary,
} from './protocol-format';
import { loadToolsModule } from '../../host/worker/tools-module';
import type { ProjectConfig } from '../../host/project/config';
import { projectScenarioNames } from '../../host/project/worker-options';
import { buildReport, renderSummary, writeReport, type ProtocolReport } from './report';
import { killAllWorkersNow } from './worker-pool';
import { installRuntimeLogger } from '../../src/observability/logger';

/** A crash point the plan uses needs a feature this build does not have yet. Nothing has run. */
export class FeatureUnavailableError extends Error {
  override readonly name = 'FaultProtocol.NotYetAvailable';
}

export interface RunProtocolOptions {
  readonly file: string;
  /** A project: its scenarios, tools, services (started fresh per case from their entries) and policy. */
  readonly project?: ProjectConfig;
  readonly reportFile?: string;
  /** Where bundles, databases and logs go; default a fresh temp directory. */
  readonly dataDir?: string;
  /** Progress (stderr). */
  readonly say?: (line: string) => void;
  /** Plan, table and write-ups (stdout). */
  readonly print?: (text: string) => void;
}

/** Throws FeatureUnavailableError when a fault's crash point needs a feature `bundle` lacks. */
export function checkFeatures(plan: Plan, bundle: BuiltBundle): void {
  const problems: string[] = [];
  for (const c of plan.cases) {
    c.faults.forEach((f, i) => {
      const spec = CRASH_POINTS[f.at] as { requires?: string };
      if (spec.requires !== undefined && !bundle.features.has(spec.requires as never)) {
        problems.push(
          `  cases[${c.index}].faults[${i}].at: crash point "${f.at}" is not yet available: it needs the ${spec.requires} (compensation), which this build's workflow code does not run yet`,
        );
      }
    });
  }
  if (problems.length > 0)
    throw new FeatureUnavailableError(`the protocol cannot run on this build:\n${problems.join('\n')}`);
}

export function quietRuntime(): void {
  installRuntimeLogger({ component: 'temporal', level: 'ERROR', format: 'text' });
}

/** Runs a protocol file end to end and returns its report (also written to `reportFile`). */
export async function runProtocol(opts: RunProtocolOptions): Promise<ProtocolReport> {
  const say = opts.say ?? ((m: string) => process.stderr.write(`${m}\n`));
  const print = opts.print ?? ((t: string) => process.stdout.write(`${t}\n`));
  const started = Date.now();
  const vocab = opts.project ? await projectVocabulary(opts.project) : BUILTIN_VOCABULARY;
  const protocol = loadProtocol(opts.file, vocab);
  const plan = planProtocol(protocol, vocab);
  print(formatPlan(plan));
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-faults-'));
  const ownDir = opts.dataDir === undefined;
  say(`faults: building the workflow bundle (data in ${dataDir})`);
  const bundle = await buildBundle(dataDir, opts.project?.tools);
  checkFeatures(plan, bundle);
  quietRuntime();
  const lab = await openLab(
    dataDir,
    bundle,
    opts.project ? { configFile: opts.project.file, serviceEntries: serviceEntries(opts.project) } : undefined,
  );
  const results: CaseResult[] = [];
  try {
    say(`faults: Temporal at ${lab.shared.server.address}${lab.shared.server.external ? ' (TEMPORAL_ADDRESS)' : ''}`);
    for (const pc of plan.cases) {
      const tag = `[${pc.index + 1}/${plan.cases.length}] ${pc.name}`;
      say(
        `${tag}: starting (${pc.scenario}, ${pc.strategy}${pc.faults.length ? `, ${pc.faults.map((f) => `${f.at}=${f.do}`).join(', ')}` : ''})`,
      );
      const r = await runCase(lab, plan, pc, say);
      results.push(r);
      say(
        `${tag}: ${r.passed ? 'PASS' : 'FAIL'} in ${(r.durationMs / 1000).toFixed(1)} s${r.failures.length ? `: ${r.failures.map((f) => f.message).join('; ')}` : ''}`,
      );
    }
  } finally {
    await lab.stop();
  }
  const report = buildReport(opts.file, PROTOCOL_FORMAT, plan, results, Date.now() - started);
  if (opts.reportFile) writeReport(opts.reportFile, report);
  // Databases, logs and the bundle stay for a failed run (evidence); a green run leaves nothing behind.
  if (ownDir && report.passed) rmSync(dataDir, { recursive: true, force: true });
  else say(`faults: databases and logs kept in ${dataDir}`);
  print(`\n${renderSummary(report)}`);
  return report;
}

/** The services of a project that `faults` can start: those the config gives a process entry (`main`). */
function serviceEntries(project: ProjectConfig): Record<string, string> {
  return Object.fromEntries(
    Object.entries(project.services).flatMap(([name, s]) => (s.main === undefined ? [] : [[name, s.main]])),
  );
}

/** What a project's protocol may name: its scenarios and the services `faults` can start. */
export async function projectVocabulary(project: ProjectConfig): Promise<ProtocolVocabulary> {
  const problem = (message: string): never => {
    throw new ProtocolFormatError(project.file, [{ path: '(project config)', message }]);
  };
  let scenarios: string[] | undefined;
  try {
    scenarios = await projectScenarioNames(project);
  } catch (err) {
    return problem((err as Error).message);
  }
  if (scenarios === undefined)
    return problem(
      'a fault protocol runs scripted scenarios: the config names no { kind: "scripted", scenarios } model',
    );
  let tools: ProtocolVocabulary['tools'];
  try {
    tools = toolTargetsOf(loadToolsModule(project.tools));
  } catch (err) {
    return problem(`the tools module ${project.tools} cannot be loaded: ${(err as Error).message}`);
  }
  const services = Object.keys(serviceEntries(project));
  if (services.length === 0)
    return problem(
      'the config gives no service a process entry (services.<name>.main): each case starts its services fresh, on databases of its own',
    );
  return {
    scenarios,
    services,
    defaultService: services[0]!,
    scenarioHelp: "a scenario of the project's scripted model",
    servicesHelp: 'default: every service of the project with a process entry',
    tools,
  };
}

/** The CLI entry: returns the process exit code. */
export async function runFaultsCommand(
  file: string,
  opts: { report?: string; project?: ProjectConfig },
): Promise<number> {
  // Interrupted: kill this run's workers now; services and dev servers go with this process (their exit hooks).
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\nledgerloop faults: ${signal}: stopping the run's processes\n`);
    killAllWorkersNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const report = await runProtocol({
      file,
      ...(opts.report ? { reportFile: opts.report } : {}),
      ...(opts.project ? { project: opts.project } : {}),
    });
    if (opts.report) process.stderr.write(`faults: report written to ${opts.report}\n`);
    return report.passed ? 0 : 1;
  } catch (err) {
    if (err instanceof ProtocolFormatError || err instanceof FeatureUnavailableError) {
      process.stderr.write(`ledgerloop faults: ${err.message}\nNothing was run.\n`);
      return 2;
    }
    throw err;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}
