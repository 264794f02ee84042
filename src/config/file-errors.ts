/**
 * The OS reason of a failed file operation without Node's repetition of syscall and path:
 * "ENOENT: no such file or directory, open 'x'" -> "ENOENT: no such file or directory".
 */
export function describeFileError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const reason = /^(E[A-Z0-9]+: [^,]+)/.exec(error.message);
  return reason?.[1] ?? error.message;
}
