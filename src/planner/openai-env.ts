/**
 * The worker's OpenAI wiring from its environment. The API key and base URL are read here, on the worker, and
 * never travel in workflow input or history:
 *
 *   OPENAI_API_KEY            the provider key (optional for a local OpenAI-compatible server)
 *   OPENAI_BASE_URL           an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1
 *   LEDGERLOOP_OPENAI_MODEL   the model for runs whose `planner.model` is empty
 *   LEDGERLOOP_TRANSCRIPT_URL a PostgreSQL every worker shares (postgres://…); wins over the SQLite file
 *   LEDGERLOOP_TRANSCRIPT_DB  the SQLite transcript file (default `<repo>/.data/transcripts.db`), per machine
 */
import type OpenAI from 'openai';
import { createOpenAIClient } from './openai-planner';
import { DEFAULT_TRANSCRIPT_DB, SqliteTranscriptStore, type TranscriptStore } from '../stores/transcript-store';
import { configValue } from '../config';
import { PostgresTranscriptStore } from '../stores/transcript-store-pg';

/** The store the environment names: PostgreSQL (shared) with LEDGERLOOP_TRANSCRIPT_URL, else the SQLite file. */
export function transcriptStoreFromEnv(env: NodeJS.ProcessEnv = process.env, sqliteFile?: string): TranscriptStore {
  const url = configValue('LEDGERLOOP_TRANSCRIPT_URL', env);
  if (url) return new PostgresTranscriptStore(url);
  return new SqliteTranscriptStore(sqliteFile ?? configValue('LEDGERLOOP_TRANSCRIPT_DB', env) ?? DEFAULT_TRANSCRIPT_DB);
}

/** What `createActivities` takes for the OpenAI planner. */
export interface OpenAIActivityDeps {
  /** Built once per worker with `maxRetries: 0`; without it, `kind: 'openai'` runs fail non-retryably. */
  readonly client?: OpenAI;
  /** Defaults to a SQLite store at `<repo>/.data/transcripts.db`, opened on first use. */
  readonly transcriptStore?: TranscriptStore;
  readonly defaultModel?: string;
}

/** OpenAI deps from the environment, or undefined when neither OPENAI_API_KEY nor OPENAI_BASE_URL is set. */
export function openAIDepsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  opts: { readonly transcriptDbPath?: string } = {},
): OpenAIActivityDeps | undefined {
  const apiKey = configValue('OPENAI_API_KEY', env);
  const baseURL = configValue('OPENAI_BASE_URL', env);
  if (!apiKey && !baseURL) return undefined;
  const defaultModel = configValue('LEDGERLOOP_OPENAI_MODEL', env);
  return {
    client: createOpenAIClient({ ...(apiKey ? { apiKey } : {}), ...(baseURL ? { baseURL } : {}) }),
    transcriptStore: transcriptStoreFromEnv(env, opts.transcriptDbPath),
    ...(defaultModel ? { defaultModel } : {}),
  };
}
