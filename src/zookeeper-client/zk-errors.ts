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
  /** ZooKeeper 3.6+: the server's throttler dropped the request (or a whole multi) before running it. */
  THROTTLEDOP: -127,
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

  /**
   * The connection dropped with the request outstanding (the C client also drops it when a reply
   * does not match its request: RUNTIMEINCONSISTENCY). It may or may not have been applied; the
   * session may still be alive.
   */
  get connectionLost(): boolean {
    return this.code === 'CONNECTIONLOSS' || this.code === 'OPERATIONTIMEOUT' || this.code === 'RUNTIMEINCONSISTENCY';
  }

  /**
   * Whether the request was applied cannot be told from this answer: only a code the server
   * returned for a request it refused (NODEEXISTS, BADVERSION, THROTTLEDOP, ... and UNIMPLEMENTED)
   * proves nothing was applied, or a request the client refused to send (BADARGUMENTS). Every
   * other code of the client's range may stand for a request the server ran: a lost connection,
   * a reply that did not match its request, an answer the client could not read. SESSIONMOVED too:
   * the server answered for a session that had moved on. Look before acting on it.
   */
  get outcomeUnknown(): boolean {
    if (this.code === 'SESSIONMOVED') return true;
    return isClientSideRc(this.rc) && !this.sessionGone && !REFUSED_BEFORE_APPLYING.has(this.code);
  }

  /** The handle is unusable: the session is gone or the handle was closed. */
  get sessionGone(): boolean {
    return this.code === 'SESSIONEXPIRED' || this.code === 'INVALIDSTATE' || this.code === 'CLOSING' || this.code === 'AUTHFAILED';
  }
}

/** Codes -1 to -99: the client's own (system and API usage); -100 and below are the server's answers. */
function isClientSideRc(rc: number): boolean {
  return rc < 0 && rc > -100;
}

/** Client-range codes that prove the request was not applied. */
const REFUSED_BEFORE_APPLYING: ReadonlySet<ZkErrorCode> = new Set(['BADARGUMENTS', 'UNIMPLEMENTED']);

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
