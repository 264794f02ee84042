/*
 * es-lock-proxy: closing a session without stopping the event loop (implemented in zk-requests.c).
 *
 * zookeeper_close of the C client 3.8, on a connected handle, sends a close request and then
 * blocks: up to 3 s to send it and up to 1.5 s for the server to hang up. In a process with
 * other sessions (or whose ZooKeeper link passes through the process itself) nothing else runs
 * meanwhile. Instead: es_zoo_aclose_session asks the server to end the session without blocking;
 * once it answered (or gave no answer in time), es_zoo_drop_connection, then zookeeper_close
 * frees the handle at once.
 */
#ifndef ES_ZK_CLOSE_H_
#define ES_ZK_CLOSE_H_

#include <zookeeper.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Asks the server to end the session (ZOO_CLOSE_OP): `completion` gets ZOK once the server has
 * ended it (its ephemeral nodes are gone), or the client's error. */
int es_zoo_aclose_session(zhandle_t *zh, void_completion_t completion, const void *data);

/* Closes the client's socket, as the client does itself when a send fails (state NOTCONNECTED). */
void es_zoo_drop_connection(zhandle_t *zh);

#ifdef __cplusplus
}
#endif

#endif /* ES_ZK_CLOSE_H_ */
