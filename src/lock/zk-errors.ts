/**
 * The one place that understands the binding's rejections. The `zookeeper` package rejects with
 * `Error("<rc> <text>")` (e.g. "-110 node exists"), or, when the call could not even be queued,
 * with a message ending in `"<NAME> <rc>"`. Everything else in the lock module switches on the
 * typed code returned here, never on message strings.
 */
export const ZK_RC = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  INVALIDSTATE: -9,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  CLOSING: -116,
  SESSIONMOVED: -118,
} as const;

export type ZkErrorCode = keyof typeof ZK_RC | 'UNKNOWN';

const NAME_BY_RC = new Map<number, ZkErrorCode>(
  Object.entries(ZK_RC).map(([name, rc]) => [rc, name as keyof typeof ZK_RC]),
);

/** The name of a ZooKeeper return code ('UNKNOWN' for one not listed above). */
export function zkCodeOf(rc: number): ZkErrorCode {
  return NAME_BY_RC.get(rc) ?? 'UNKNOWN';
}

export class ZkError extends Error {
  readonly rc: number;
  readonly code: ZkErrorCode;

  constructor(rc: number, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ZkError';
    this.rc = rc;
    this.code = zkCodeOf(rc);
  }

  /** The request may or may not have been applied; the session may still be alive. */
  get connectionLost(): boolean {
    return this.code === 'CONNECTIONLOSS' || this.code === 'OPERATIONTIMEOUT';
  }

  /**
   * Whether the request was applied cannot be told from this answer: the connection was lost, the
   * server answered for a session that had moved to another server (SESSIONMOVED), or the client
   * could not read the answer (MARSHALLINGERROR). Look before acting on it.
   */
  get outcomeUnknown(): boolean {
    return this.connectionLost || this.code === 'SESSIONMOVED' || this.code === 'MARSHALLINGERROR';
  }

  /** The handle is unusable: the session is gone or the handle was closed. */
  get sessionGone(): boolean {
    return this.code === 'SESSIONEXPIRED' || this.code === 'INVALIDSTATE' || this.code === 'CLOSING' || this.code === 'AUTHFAILED';
  }
}

const LEADING_RC = /^(-?\d+)\s/;
const TRAILING_RC = /\s(-?\d+)"?$/;

/** Maps any rejection of the binding to a `ZkError` (rc -1 SYSTEMERROR when none can be read). */
export function toZkError(error: unknown): ZkError {
  if (error instanceof ZkError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const match = LEADING_RC.exec(message) ?? TRAILING_RC.exec(message);
  const rc = match?.[1] === undefined ? ZK_RC.SYSTEMERROR : Number.parseInt(match[1], 10);
  return new ZkError(rc, message, error);
}

export function isZkCode(error: unknown, code: ZkErrorCode): boolean {
  return error instanceof ZkError && error.code === code;
}
