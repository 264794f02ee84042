import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How the stand-in writes a JSON answer: whole, or (the `stall-body-after-head` fault) its head and
 * the first half of its body, then nothing more while the socket stays open. The request has been
 * handled as usual first: a write is applied, as Elasticsearch applies a write whose answer a
 * congested or paused node is slow to send.
 */
export type AnswerWriter = (res: ServerResponse, req: IncomingMessage, status: number, body: Buffer, headers: Record<string, string | string[]>) => void;

export const writeWholeAnswer: AnswerWriter = (res, req, status, body, headers) => {
  res.writeHead(status, { ...headers, 'content-length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
};

export const writeStalledAnswer: AnswerWriter = (res, _req, status, body, headers) => {
  res.writeHead(status, { ...headers, 'content-length': String(body.length) });
  res.write(body.subarray(0, Math.max(1, Math.floor(body.length / 2))));
};
