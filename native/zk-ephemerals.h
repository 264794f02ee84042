/*
 * es-lock-proxy: getEphemerals (op 103, ZooKeeper 3.6+) on the C client 3.8, which has the
 * request's jute serializers but no call for it: the paths of every ephemeral node this session
 * owns whose path starts with a prefix, in one request (the lock engine's orphan sweep).
 */
#ifndef ES_ZK_EPHEMERALS_H_
#define ES_ZK_EPHEMERALS_H_

#include <zookeeper.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ES_GET_EPHEMERALS_OP 103

/* Queues the request; `completion` gets the paths (chroot removed) or NULL with an error, once,
 * from inside zookeeper_process (or zookeeper_close). Returns ZOK or an error (then it is not called). */
int es_zoo_aget_ephemerals(zhandle_t *zh, const char *prefix, strings_completion_t completion, const void *data);

#ifdef __cplusplus
}
#endif

#endif /* ES_ZK_EPHEMERALS_H_ */
