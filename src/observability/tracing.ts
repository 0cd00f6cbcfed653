/**
 * OpenTelemetry tracing of clients, workflows and activities with the SDK's `OpenTelemetryPlugin`
 * (`@temporalio/interceptors-opentelemetry` 1.24), given to clients and workers as a plugin (`plugins: [plugin]`).
 * What it installs:
 *
 * - client: `OpenTelemetryWorkflowClientInterceptor` (span `StartWorkflow:<type>`, context passed in headers);
 * - worker: `OpenTelemetryActivityInboundInterceptor` (span `RunActivity:<type>`) and the workflow interceptor
 *   module (spans `RunWorkflow:<type>`, `StartActivity:<type>`, ...), which runs inside the sandbox and must be
 *   part of the workflow bundle (`buildWorkflowBundle({ tracing: true })`); its spans leave the sandbox through
 *   the `exporter` sink.
 *
 * Configured from the environment (off by default):
 *
 *   LEDGERLOOP_TRACING=console   one JSON line per span on stderr
 *   LEDGERLOOP_TRACING=otlp      OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318)
 *   OTEL_SERVICE_NAME            overrides the service name a process reports
 */
import * as otel from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OpenTelemetryPlugin, type OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks } from '@temporalio/worker';
import { TRACING_WORKFLOW_INTERCEPTORS_MODULE } from './workflow-interceptors';
import { registerProcessTracing, tracingModeFromEnv } from './tracing-mode';

export { shutdownTracingFromEnv, tracingEnabled, tracingModeFromEnv, type TracingMode } from './tracing-mode';

export { TRACING_WORKFLOW_INTERCEPTORS_MODULE };

/** A set-up tracer provider with the interceptors and the sink that feed it. */
export interface Tracing {
  readonly tracer: otel.Tracer;
  readonly resource: Resource;
  readonly spanProcessor: SpanProcessor;
  /**
   * For `new Client({ plugins })` and `Worker.create({ plugins })`: the client, activity and workflow interceptors
   * and the sink workflow spans leave the sandbox through. A worker that loads a prebuilt bundle needs the bundle
   * built with tracing (`buildWorkflowBundle({ tracing: true })`): the plugin adds the workflow interceptor module
   * only where the worker bundles itself.
   */
  readonly plugin: OpenTelemetryPlugin;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Options for createTracing. */
export interface CreateTracingOptions {
  readonly exporter: SpanExporter;
  readonly serviceName: string;
  /** Export each span as it ends (tests, console) instead of batching. Default false. */
  readonly simple?: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Writes each finished span as one JSON line to stderr (stdout stays free for program output). */
export class StderrSpanExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const s of spans) {
      const ctx = s.spanContext();
      const line = {
        span: s.name,
        traceId: ctx.traceId,
        spanId: ctx.spanId,
        parentSpanId: s.parentSpanId,
        service: s.resource.attributes['service.name'],
        durationUs: hrTimeToMicroseconds(s.duration),
        status: s.status.code === otel.SpanStatusCode.ERROR ? 'error' : 'ok',
        attributes: s.attributes,
      };
      process.stderr.write(`[trace] ${JSON.stringify(line)}\n`);
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
}

let registered = false;

/**
 * A tracer provider exporting to `exporter`, with Temporal's interceptors bound to its tracer. The first call in a
 * process also registers it globally (context manager and W3C propagator), which the interceptors rely on to
 * carry trace context from the client to the workflow and on to activities.
 */
export function createTracing(opts: CreateTracingOptions): Tracing {
  const resource = new Resource({ 'service.name': opts.serviceName });
  const spanProcessor = opts.simple ? new SimpleSpanProcessor(opts.exporter) : new BatchSpanProcessor(opts.exporter);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  if (!registered) {
    provider.register();
    registered = true;
  }
  const tracer = provider.getTracer('ledgerloop');
  return {
    tracer,
    resource,
    spanProcessor,
    plugin: new OpenTelemetryPlugin({ tracer, resource, spanProcessor }),
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The sink to give a worker when tracing is off: a workflow bundle built with tracing still exports its spans
 * through the `exporter` sink, and this drops them quietly instead of logging an unregistered-sink error.
 */
export const DISCARD_WORKFLOW_SPANS: InjectedSinks<OpenTelemetrySinks> = {
  exporter: { export: { fn: () => undefined } },
};

let fromEnv: { tracing: Tracing | undefined } | undefined;

/**
 * The process's tracing as LEDGERLOOP_TRACING configures it, created once per process (later calls return the same
 * instance), or undefined when tracing is off.
 */
export function tracingFromEnv(serviceName: string, env: Env = process.env): Tracing | undefined {
  const mode = tracingModeFromEnv(env);
  if (fromEnv) return fromEnv.tracing;
  const name = env.OTEL_SERVICE_NAME?.trim() || serviceName;
  let tracing: Tracing | undefined;
  if (mode === 'console')
    tracing = createTracing({ exporter: new StderrSpanExporter(), serviceName: name, simple: true });
  if (mode === 'otlp') {
    // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT itself.
    tracing = createTracing({ exporter: new OTLPTraceExporter(), serviceName: name });
  }
  fromEnv = { tracing };
  if (tracing) registerProcessTracing(tracing);
  return tracing;
}
