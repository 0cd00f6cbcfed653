/**
 * The tool registry the workflow bundle reads, under one module id. A worker given a user's tool module
 * (`createWorker({ tools })`, `toolsModule` in host/worker/bundle.ts) has its bundler alias this module to that
 * one, so the workflow code runs the user's declarations without any edit to the runtime. Default: the built-in
 * tools. A module that replaces this one exports `workflowTools`, a `ToolRegistry` (see `defineToolModule`).
 */
import { builtinTools, type ToolRegistry } from './registry';

export const workflowTools: ToolRegistry = builtinTools;
