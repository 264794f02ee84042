import { ProxyError } from '../errors/proxy-error.js';
import type { Priority } from '../lock/lock-engine.js';
import { errorOutcome, type WriteOutcome } from '../write/write-outcome.js';
import type { BulkItemRefusal, WriteRequest } from '../write/write-request.js';
import type { WriteAdmission } from './write-admission.js';

/** Adds headers to a write's answer, whatever writes it (the HTTP edge's part). */
export type AnswerHeaders<R extends WriteRequest> = (request: R, headers: Readonly<Record<string, string>>) => void;

/** Tells who each write in flight is, by request id (the principal-labelled lock metrics). */
export interface WritePrincipals {
  begin(requestId: string, principal: string | null): void;
  end(requestId: string): void;
}

/**
 * `writePath` behind the admission: a write it refuses is answered at once, with no lock taken;
 * an admitted one goes on at the priority it was granted and gives back its share when over.
 */
export function admittedWritePath<R extends WriteRequest>(
  writePath: (request: R) => Promise<WriteOutcome>,
  admit: WriteAdmission,
  answerHeaders: AnswerHeaders<R>,
  principals: WritePrincipals,
): (request: R) => Promise<WriteOutcome> {
  return async (request) => {
    let admission;
    try {
      admission = await admit(request);
    } catch (error) {
      if (error instanceof ProxyError) return errorOutcome(error);
      throw error;
    }
    if (!admission.admitted) {
      // The throttle closes the connection after this answer.
      if (admission.closeConnection === true) answerHeaders(request, { connection: 'close' });
      return admission.outcome;
    }
    if (Object.keys(admission.answerHeaders).length > 0) answerHeaders(request, admission.answerHeaders);
    principals.begin(request.requestId, admission.principal);
    try {
      return await writePath(admission.priority === null && admission.bulkItemRefusal === null ? request : asAdmitted(request, admission.priority, admission.bulkItemRefusal));
    } finally {
      principals.end(request.requestId);
      admission.release();
    }
  };
}

/** A copy of the request as admitted (its priority, its bulk items' authorization); `streamAnswer` may be a method of its class. */
function asAdmitted<R extends WriteRequest>(request: R, priority: Priority | null, bulkItemRefusal: BulkItemRefusal | null): R {
  return {
    ...request,
    ...(priority === null ? {} : { priority }),
    ...(bulkItemRefusal === null ? {} : { bulkItemRefusal }),
    streamAnswer: (forward) => request.streamAnswer(forward),
  };
}
