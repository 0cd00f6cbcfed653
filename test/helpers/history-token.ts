/**
 * Whether a run's history holds an identity token in clear text anywhere: its protobuf bytes (payloads as they
 * were written, encrypted or not) searched for the start of a compact JWS signed with EdDSA, as every token of
 * the development issuer begins.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** base64url of `{"alg":"EdDSA",`: the first bytes of every EdDSA JWS header Ledgerloop's issuers write. */
export const EDDSA_JWS_PREFIX = 'eyJhbGciOiJFZERTQSIs';

export async function historyHoldsAToken(handle: WorkflowHandle): Promise<boolean> {
  const bytes = temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish();
  return Buffer.from(bytes).toString('latin1').includes(EDDSA_JWS_PREFIX);
}
