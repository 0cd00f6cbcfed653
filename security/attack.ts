/**
 * The attack suite's contract. An attack group sets up the real processes it needs (a dev server, services,
 * workers), then runs attacks one by one; each attack reports what it observed, whether that was the expected
 * refusal, and how many business effects it caused (read from a downstream's own records, never assumed).
 */
export interface AttackOutcome {
  /** What happened, in a few words: the status and typed code, the stop reason, the error name. */
  readonly observed: string;
  /** Whether the observed refusal is the expected one (a typed refusal, not a crash or a silent success). */
  readonly refused: boolean;
  /** Business effects the attack caused downstream (must be 0). */
  readonly effects: number;
}

export interface Attack {
  readonly name: string;
  /** The refusal the attack must meet, e.g. `403 Capability.Invalid`. */
  readonly expected: string;
  run(): Promise<AttackOutcome>;
}

export interface AttackGroupContext {
  /** A scratch directory for this group's databases and logs. */
  readonly dir: string;
  /** Progress lines (stderr). */
  readonly log: (line: string) => void;
}

export interface AttackGroup {
  readonly name: string;
  /** Start what the attacks need; the returned teardown stops it again, whatever happened. */
  setup(ctx: AttackGroupContext): Promise<{ readonly attacks: readonly Attack[]; teardown(): Promise<void> }>;
}

export interface AttackRow extends AttackOutcome {
  readonly group: string;
  readonly attack: string;
  readonly expected: string;
  readonly ms: number;
}

/** A row holds when the attack met its refusal and caused nothing. */
export function holds(row: Pick<AttackRow, 'refused' | 'effects'>): boolean {
  return row.refused && row.effects === 0;
}
