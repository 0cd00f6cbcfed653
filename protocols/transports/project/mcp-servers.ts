/**
 * The MCP servers of the transport protocols' project (the config's `mcp`): `files`, the registry's
 * server-filesystem from node_modules (nothing downloaded at run time), over stdio, allowed one directory. Under
 * `ledgerloop faults` that directory is in the case's own (LEDGERLOOP_CASE_DIR), so every case starts empty; the
 * runner puts its fault harness in front of the server each worker spawns.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { McpServersOptions, McpStdioServer } from '../../../host/mcp';

const caseDir = process.env['LEDGERLOOP_CASE_DIR'];
/** The only directory the server may touch. */
export const FILES_DIR = caseDir
  ? path.join(caseDir, 'files')
  : path.join(__dirname, '../../../.data/transports-files');
mkdirSync(FILES_DIR, { recursive: true });

export const servers: Readonly<Record<string, McpStdioServer>> = {
  files: {
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), FILES_DIR],
  },
};

/** A lost answer ends the wait in 2.5 s, inside the lab's 3 s tool attempt; a killed server is back in 50 ms. */
export const options: McpServersOptions = { callTimeoutMs: 2_500, restartDelayMs: 50 };
