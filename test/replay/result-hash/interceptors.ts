/**
 * A workflow interceptor for the replay tier only: hands the projection hash a replayed run returns to the
 * `replayedResult` sink (called during replay), so a test can compare it with the hash the run returned when it
 * was recorded. It issues no command: a bundle with it replays exactly as one without.
 */
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface ResultSinks extends Sinks {
  replayedResult: { projectionHash(hash: string | undefined): void };
}

const { replayedResult } = proxySinks<ResultSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const result = (await next(input)) as { projectionHash?: unknown } | undefined;
        replayedResult.projectionHash(typeof result?.projectionHash === 'string' ? result.projectionHash : undefined);
        return result;
      },
    },
  ],
});
