/**
 * `@temporalio/ai-sdk` 1.23.0 pins `@temporalio/workflow` and `@temporalio/common` at exactly 1.23.0, while
 * Ledgerloop is on 1.24.0; package.json's `overrides` align them. Two copies of `@temporalio/workflow` in one
 * bundle would give the workflow two sandbox globals (activator, `proxyActivities` state): this checks the bundle an
 * `AiSdkPlugin` worker builds for the refund agent's baseline holds exactly one copy of each, the one at 1.24.0.
 * The control: a bundle whose workflow file sits next to a second copy of `@temporalio/workflow` lists two.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Runtime } from '@temporalio/worker';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';
import { bundleWithModuleList, packageCopies } from '../support/bundle-modules';
import { REPO_ROOT } from '../../host/worker/bundle';
import { quietRuntime } from '../helpers/stack';

const BASELINE = path.join(REPO_ROOT, 'examples', 'refund-ai-sdk', 'src', 'baseline', 'workflows.ts');
const WORKFLOW_ROOT = path.dirname(require.resolve('@temporalio/workflow/package.json'));

beforeAll(() => quietRuntime());

function bundle(workflowsPath: string) {
  return bundleWithModuleList({
    workflowsPath,
    plugins: [new AiSdkPlugin({ modelProvider: scriptedRefundProvider() })],
    logger: Runtime.instance().logger,
  });
}

test('the AI SDK agent bundle carries exactly one @temporalio/workflow and one @temporalio/common, at 1.24.0', async () => {
  const { modules } = await bundle(BASELINE);
  expect(modules).toContain(BASELINE);
  // What the bundle must hold: ai's generateText, the AI SDK plugin's workflow side and its polyfills.
  expect(packageCopies(modules, 'ai')).toHaveLength(1);
  expect(packageCopies(modules, '@temporalio/ai-sdk')).toEqual([expect.objectContaining({ version: '1.23.0' })]);
  expect(packageCopies(modules, 'web-streams-polyfill')).toHaveLength(1);
  expect(packageCopies(modules, '@temporalio/workflow')).toEqual([{ root: WORKFLOW_ROOT, version: '1.24.0' }]);
  expect(packageCopies(modules, '@temporalio/common')).toEqual([expect.objectContaining({ version: '1.24.0' })]);
}, 120_000);

test('control: a second @temporalio/workflow beside a workflow file is listed as a second copy', async () => {
  const dir = path.join(REPO_ROOT, '.data', 'bundle-copies-control');
  rmSync(dir, { recursive: true, force: true });
  const copy = path.join(dir, 'node_modules', '@temporalio', 'workflow');
  mkdirSync(copy, { recursive: true });
  cpSync(path.join(WORKFLOW_ROOT, 'lib'), path.join(copy, 'lib'), { recursive: true });
  writeFileSync(
    path.join(copy, 'package.json'),
    JSON.stringify({ name: '@temporalio/workflow', version: '1.23.0', main: 'lib/index.js' }),
  );
  const workflows = path.join(dir, 'workflows.ts');
  writeFileSync(
    workflows,
    `import { sleep } from '@temporalio/workflow';\nexport * from ${JSON.stringify(BASELINE)};\nexport async function napping(): Promise<void> { await sleep(1); }\n`,
  );
  try {
    const { modules } = await bundle(workflows);
    expect(
      packageCopies(modules, '@temporalio/workflow')
        .map((c) => c.version)
        .sort(),
    ).toEqual(['1.23.0', '1.24.0']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
