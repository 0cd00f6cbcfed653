import {
  attemptTimeoutMs,
  DeadlineTooClose,
  modelCallPreset,
  reconcilePreset,
  toolDispatchPreset,
} from '../../src/domain/activity-presets';
import { DEFAULT_CAPS, DEFAULT_LIMITS } from '../../src/domain/run';

const clock = (leftMs: number) => ({
  deadlineAtMs: 1_000_000 + leftMs,
  nowMs: 1_000_000,
  caps: DEFAULT_CAPS,
  limits: DEFAULT_LIMITS,
});

describe('activity presets derive from one absolute deadline', () => {
  test('far from the deadline the per-attempt cap applies', () => {
    expect(attemptTimeoutMs(clock(600_000), 10_000)).toBe(10_000);
  });

  test('near the deadline the attempt gets what is left after the recovery reserve', () => {
    expect(attemptTimeoutMs(clock(7_000), 10_000)).toBe(7_000 - DEFAULT_CAPS.recoveryReserveMs);
  });

  test('with too little time left no attempt is scheduled', () => {
    expect(() => attemptTimeoutMs(clock(DEFAULT_CAPS.recoveryReserveMs + 100), 10_000)).toThrow(DeadlineTooClose);
  });

  test('every preset has finite attempts and a schedule-to-close that ends at the deadline', () => {
    const c = clock(60_000);
    for (const preset of [modelCallPreset(c, 's'), toolDispatchPreset(c, 's'), reconcilePreset(c, 's')]) {
      expect(preset.retry?.maximumAttempts).toBeGreaterThan(0);
      expect(Number.isFinite(preset.retry?.maximumAttempts)).toBe(true);
      expect(preset.scheduleToCloseTimeout).toBeLessThanOrEqual(60_000);
    }
    expect(toolDispatchPreset(c, 's').scheduleToCloseTimeout).toBe(60_000 - DEFAULT_CAPS.recoveryReserveMs);
    expect(toolDispatchPreset(c, 's').retry?.nonRetryableErrorTypes).toContain('Idempotency.ArgumentsMismatch');
  });
});
