/*
 * es-lock-proxy: requests of our own on a handle of the ZooKeeper C client 3.8, queued the way
 * the client queues its own (src/zookeeper.c, Apache License 2.0), with the definitions of
 * zk-client-internals.h. Used by zk-multi.c and zk-close.h (C only: the internals are C).
 */
#ifndef ES_ZK_REQUESTS_H_
#define ES_ZK_REQUESTS_H_

#include "zk-client-internals.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A completion entry for request `xid` whose reply goes to `completion` undecoded (a "void"
 * completion): the raw reply is in entry->buffer while the completion runs. */
completion_list_t *es_new_request_entry(int xid, void_completion_t completion, const void *data);

/* Queues the entry on the outstanding requests and `bytes` (a serialized request, taken over on
 * success) for sending, then sends what it can without blocking. ZOK or ZINVALIDSTATE (handle
 * closing: nothing was queued, the caller still owns both). */
int es_enqueue_request(zhandle_t *zh, completion_list_t *entry, char *bytes, int length);

#ifdef __cplusplus
}
#endif

#endif /* ES_ZK_REQUESTS_H_ */
