/** `ledgerloop --version`: this package's version, the Temporal SDK it runs on, the server version it deploys. */
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../cluster/versions';

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function versionLine(): string {
  const own = (require('../../package.json') as { version: string }).version;
  return `ledgerloop ${own} (Temporal TypeScript SDK ${packageVersion('@temporalio/worker')}; deploys Temporal server ${TEMPORAL_SERVER_VERSION}, Web UI ${TEMPORAL_UI_VERSION})`;
}
