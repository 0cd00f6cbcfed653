/**
 * Progress on long work, always on stderr (stdout stays machine-readable): a spinner with the elapsed time when
 * stderr is a terminal, plain lines otherwise (a start line, a "still …" line every `heartbeatMs`, an end line).
 */

/** Where progress goes: a stream with an optional `isTTY`. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressOptions {
  readonly stream?: ProgressStream;
  /** Override the terminal detection (tests). */
  readonly tty?: boolean;
  /** Plain mode: how often to print a "still …" line. Default 15 s; 0 turns it off. */
  readonly heartbeatMs?: number;
  /** A clock (tests). */
  readonly now?: () => number;
}

export interface Progress {
  /** Change the label (the spinner shows it at once; plain mode prints it as a new line). */
  update(label: string): void;
  /** Stop and print `✓ label (elapsed)` or the given line. */
  succeed(line?: string): void;
  /** Stop and print `✗ label (elapsed)` or the given line. */
  fail(line?: string): void;
  /** Stop without printing anything more. */
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

/** `850ms`, `4.2s`, `3m05s`. */
export function formatElapsed(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const s = Math.floor(ms / 1_000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Starts showing `label` until succeed/fail/stop. */
export function startProgress(label: string, opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = opts.tty ?? stream.isTTY === true;
  const now = opts.now ?? Date.now;
  const started = now();
  let current = label;
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  const elapsed = (): string => formatElapsed(now() - started);

  if (tty) {
    const draw = (): void => {
      stream.write(`${CLEAR_LINE}${FRAMES[frame % FRAMES.length]} ${current} ${elapsed()}`);
      frame += 1;
    };
    draw();
    timer = setInterval(draw, 100);
  } else {
    stream.write(`${current}…\n`);
    const heartbeat = opts.heartbeatMs ?? 15_000;
    if (heartbeat > 0) timer = setInterval(() => stream.write(`  still ${current} (${elapsed()})\n`), heartbeat);
  }
  timer?.unref();

  let ended = false;
  const end = (line: string | undefined): void => {
    if (ended) return;
    ended = true;
    if (timer) clearInterval(timer);
    timer = undefined;
    if (tty) stream.write(CLEAR_LINE);
    if (line !== undefined) stream.write(`${line}\n`);
  };
  return {
    update(next) {
      if (ended) return;
      current = next;
      if (!tty) stream.write(`${current}…\n`);
    },
    succeed: (line) => end(line ?? `✓ ${current} (${elapsed()})`),
    fail: (line) => end(line ?? `✗ ${current} (${elapsed()})`),
    stop: () => end(undefined),
  };
}

/** Runs `work` under a progress display; the display ends with ✓ or ✗ whatever happens. */
export async function withProgress<T>(
  label: string,
  work: (p: Progress) => Promise<T>,
  opts: ProgressOptions = {},
): Promise<T> {
  const p = startProgress(label, opts);
  try {
    const value = await work(p);
    p.succeed();
    return value;
  } catch (err) {
    p.fail();
    throw err;
  }
}
