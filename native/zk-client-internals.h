/*
 * es-lock-proxy: the few private definitions of the ZooKeeper C client 3.8.0 (Apache License 2.0,
 * src/zookeeper.c) that zk-multi.c needs to queue a request of its own. They are copied verbatim;
 * scripts/build-native.mjs refuses to build when the pinned client's source no longer contains
 * them word for word (see CLIENT_INTERNALS there), so a layout change cannot go unnoticed.
 *
 * Everything else comes from the client's headers: include/ (public) and src/zk_adaptor.h
 * (zhandle_t, buffer_list_t, completion_head_t).
 */
#ifndef ES_ZK_CLIENT_INTERNALS_H_
#define ES_ZK_CLIENT_INTERNALS_H_

#include "zk_adaptor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COMPLETION_VOID 0

typedef struct completion {
    int type; /* one of COMPLETION_* values above */
    union {
        void_completion_t void_result;
        stat_completion_t stat_result;
        data_completion_t data_result;
        strings_completion_t strings_result;
        strings_stat_completion_t strings_stat_result;
        acl_completion_t acl_result;
        string_completion_t string_result;
        string_stat_completion_t string_stat_result;
        struct watcher_object_list *watcher_result;
    };
    completion_head_t clist; /* For multi-op */
} completion_t;

typedef struct _completion_list {
    int xid;
    completion_t c;
    const void *data;
    buffer_list_t *buffer;
    struct _completion_list *next;
    watcher_registration_t* watcher;
    watcher_deregistration_t* watcher_deregistration;
} completion_list_t;

#ifdef __cplusplus
}
#endif

#endif /* ES_ZK_CLIENT_INTERNALS_H_ */
