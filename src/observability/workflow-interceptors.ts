/**
 * Path of the OpenTelemetry workflow interceptor module of `@temporalio/interceptors-opentelemetry` 1.24. It runs
 * inside the workflow sandbox, so it must be bundled with the workflows (`bundleWorkflowCode`'s
 * `workflowInterceptorModules`). Kept apart from tracing.ts so that bundling does not load the OpenTelemetry SDK.
 */
export const TRACING_WORKFLOW_INTERCEPTORS_MODULE =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
