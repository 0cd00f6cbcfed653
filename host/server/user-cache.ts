/**
 * The per-user cache Ledgerloop keeps what it fetches in (the pinned Temporal binaries), shared by every project
 * and clone of the same user: fetched once per version, whichever project asked first.
 *
 *   LEDGERLOOP_CACHE_DIR            used as it is (CI points it at an empty folder to check a first install)
 *   XDG_CACHE_HOME                  <it>/ledgerloop
 *   macOS                           ~/Library/Caches/ledgerloop
 *   Windows                         %LOCALAPPDATA%\ledgerloop\Cache
 *   otherwise                       ~/.cache/ledgerloop
 */
import os from 'node:os';
import path from 'node:path';

/** The variable that names the cache folder outright. */
export const CACHE_DIR_ENV = 'LEDGERLOOP_CACHE_DIR';

/** The cache folder for this user (not created here). */
export function userCacheDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir(),
): string {
  const given = env[CACHE_DIR_ENV]?.trim();
  if (given) return path.resolve(given);
  const xdg = env['XDG_CACHE_HOME']?.trim();
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'ledgerloop');
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', 'ledgerloop');
  if (platform === 'win32') {
    const local = env['LOCALAPPDATA']?.trim() || path.join(home, 'AppData', 'Local');
    return path.join(local, 'ledgerloop', 'Cache');
  }
  return path.join(home, '.cache', 'ledgerloop');
}
