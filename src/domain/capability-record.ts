/** What may be recorded about a capability (in the history, the ledger, logs): never the token itself. */
export interface CapabilityRecord {
  /** SHA-256 (hex) of the token as sent. */
  readonly capabilityDigest: string;
  readonly kid: string;
  readonly jti: string;
  readonly aud: string;
  readonly exp: number;
}
