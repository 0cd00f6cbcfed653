/**
 * The attack suite's contract. An attack group sets up the real processes it needs (a dev server, services,
 * workers), then runs attacks one by one; each attack reports what it observed, whether that was the expected
 * refusal, and how many business effects it caused (read from a downstream's own records, never assumed).
 *
 * Every attack names its control: the same request made as it should be (a valid capability, token, approval or
 * read) against the same target, which must be accepted. A refusal whose control is refused too proves nothing (a
 * dead port, a wrong key, a target that refuses everything): such a row is VOID, and fails the suite as a breach
 * does. The runner runs each control once per group, before the first attack that names it.
 */
export interface AttackOutcome {
  /** What happened, in a few words: the status and typed code, the stop reason, the error name. */
  readonly observed: string;
  /** Whether the observed refusal is the expected one (a typed refusal, not a crash or a silent success). */
  readonly refused: boolean;
  /** Business effects the attack caused downstream (must be 0). */
  readonly effects: number;
}

export interface ControlOutcome {
  readonly observed: string;
  /** Whether the legitimate request was served as it should be. */
  readonly accepted: boolean;
}

/** The legitimate request an attack is measured against. */
export interface Control {
  readonly name: string;
  /** What acceptance looks like, e.g. `200 accepted, 1 effect`. */
  readonly expected: string;
  run(): Promise<ControlOutcome>;
}

export interface Attack {
  readonly name: string;
  /** The refusal the attack must meet, e.g. `403 Capability.Invalid`. */
  readonly expected: string;
  /** The valid request beside it: it must be accepted, or the refusal proves nothing. */
  readonly control: Control;
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
  /** The attack's control: its name, what it observed, and whether it was accepted. */
  readonly control: string;
  readonly controlObserved: string;
  readonly controlAccepted: boolean;
}

/** A row's verdict: `held` (refused, no effect, control accepted), `BREACH`, or `VOID` (the control failed). */
export function verdict(row: Pick<AttackRow, 'refused' | 'effects' | 'controlAccepted'>): 'held' | 'BREACH' | 'VOID' {
  if (!row.refused || row.effects !== 0) return 'BREACH';
  return row.controlAccepted ? 'held' : 'VOID';
}

/** A row holds when the attack met its refusal, caused nothing, and its control was accepted. */
export function holds(row: Pick<AttackRow, 'refused' | 'effects' | 'controlAccepted'>): boolean {
  return verdict(row) === 'held';
}
