import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest, type AgentOptions } from 'node:https';
import { connect } from 'node:tls';

export interface TlsAnswer {
  readonly status: number;
  readonly json: Record<string, unknown>;
  /** Whether the request went out on a kept-alive connection of the agent. */
  readonly reusedSocket: boolean;
}

/** Client side of a TLS handshake with the proxy port: the trust anchor and, for mutual TLS, a certificate. */
export type ClientTls = Pick<AgentOptions, 'ca' | 'cert' | 'key'>;

/** A keep-alive HTTPS agent with one connection, so consecutive requests share it. */
export function keepAliveAgent(tls: ClientTls): Agent {
  return new Agent({ ...tls, keepAlive: true, maxSockets: 1 });
}

/** One JSON request over HTTPS; rejects when the handshake or the connection fails. */
export function httpsJson(url: string, method: string, path: string, body: unknown, options: { agent?: Agent; tls?: ClientTls } = {}): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      `${url}${path}`,
      { method, headers: { 'content-type': 'application/json' }, ...(options.agent !== undefined ? { agent: options.agent } : { ...options.tls, agent: false }) },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), reusedSocket: req.reusedSocket }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Plain HTTP, for sending to a port that speaks TLS: resolves with whatever answered, rejects on a failed connection. */
export function plainHttpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** SHA-256 fingerprint of the certificate the port serves to a new connection (verified against `ca`). */
export function servedFingerprint(port: number, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}
