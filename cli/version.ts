/** `ledgerloop --version`: this package's version, the Temporal SDK it runs on, the server version it deploys. */
import { readFileSync } from 'node:fs';
import { packageJsonPath } from '../src/package-paths';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../lab/cluster/versions';

/** The version of an installed package, as its own package.json says. */
export function installedVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function versionLine(): string {
  const pkg = JSON.parse(readFileSync(packageJsonPath(), 'utf8')) as { version: string };
  return `ledgerloop ${pkg.version} (Temporal TypeScript SDK ${installedVersion('@temporalio/worker')}; deploys Temporal server ${TEMPORAL_SERVER_VERSION}, Web UI ${TEMPORAL_UI_VERSION})`;
}
