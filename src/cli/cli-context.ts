import type { Environment } from '../config/config-sources.js';

export interface TextSink {
  write(text: string): unknown;
}

/** Where shutdown signals come from; `process` in production, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** Everything a command may touch of the outside world, passed in rather than read from globals. */
export interface CliContext {
  readonly cwd: string;
  readonly env: Environment;
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly signals: SignalSource;
}

/** Exit status: 0 success, 1 runtime failure, 2 usage or configuration error. */
export type ExitCode = 0 | 1 | 2;

export interface Command {
  readonly name: string;
  /** One line for the command list of `--help`. */
  readonly summary: string;
  /** Full usage of the command, printed by `<command> --help`. */
  readonly usage: string;
  /** Resolves with the process's exit code once the command is finished (`start`: once shut down). */
  run(args: readonly string[], context: CliContext): Promise<ExitCode>;
}

/** A mistake on the command line: printed as one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
