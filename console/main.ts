/**
 * `ledgerloop console`: the operator console on its own, against any Temporal the CLI reaches (TEMPORAL_ADDRESS,
 * the envconfig profile), with the issuers (LEDGERLOOP_IDENTITY_ISSUERS) and policy (LEDGERLOOP_POLICY_FILE) the
 * workers use. People sign in with a token of one of those issuers. Runs until Ctrl-C.
 */
import { openSession, type ConnectionFlags } from '../cli/connect';
import { identitySourceFromEnv } from '../src/identity/config';
import { policyStoreFromEnv } from '../src/stores/policy-store';
import { builtinTools } from '../src/tools/registry';
import { DEFAULT_REFRESH_MS } from './config';
import { startConsole } from './server';

export interface ConsoleFlags extends ConnectionFlags {
  readonly host: string;
  readonly port: number;
  readonly origin: readonly string[];
  readonly temporalUi?: string;
  readonly viewerRoles: readonly string[];
}

export async function runConsoleCommand(flags: ConsoleFlags): Promise<number> {
  const session = await openSession(flags);
  const running = await startConsole(
    {
      temporal: {
        client: session.client,
        connection: session.connection,
        namespace: session.namespace,
        ...(session.dataConverter ? { dataConverter: session.dataConverter } : {}),
        ...(flags.temporalUi ? { uiUrl: flags.temporalUi } : {}),
      },
      issuers: identitySourceFromEnv(),
      policies: policyStoreFromEnv(),
      tools: builtinTools,
      viewerRoles: flags.viewerRoles,
      refreshMs: DEFAULT_REFRESH_MS,
    },
    { host: flags.host, port: flags.port, ...(flags.origin.length ? { origins: flags.origin } : {}) },
  );
  process.stderr.write(
    `ledgerloop console at ${running.url} (Temporal ${session.address}, namespace ${session.namespace}); Ctrl-C stops it\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await running.close();
  await session.connection.close().catch(() => undefined);
  return 0;
}
