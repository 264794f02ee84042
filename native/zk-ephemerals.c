/*
 * es-lock-proxy: see zk-ephemerals.h. Queued like zk-multi.c's transactions (zk-requests.c) with
 * a "void" completion, so the client does not decode the body: the completion reads the raw
 * reply from the entry's buffer, which the client keeps until the completion has returned.
 */
#include <stdlib.h>
#include <string.h>

#include <proto.h>
#include <recordio.h>
#include <zookeeper.h>
#include <zookeeper.jute.h>

#include "zk-ephemerals.h"
#include "zk-requests.h"

/* A ReplyHeader: xid (4), zxid (8), err (4). */
#define REPLY_HEADER_BYTES 16

typedef struct es_ephemerals_call {
    zhandle_t *zh;
    completion_list_t *entry;   /* ours until queued; then the client's, alive during the completion */
    strings_completion_t done;
    const void *data;
} es_ephemerals_call_t;

/* The prefix as the server knows it: the chroot of the connect string prepended. */
static char *server_prefix(zhandle_t *zh, const char *prefix) {
    char *full;
    if (zh->chroot == NULL) return strdup(prefix);
    full = (char *) malloc(strlen(zh->chroot) + strlen(prefix) + 1);
    if (full == NULL) return NULL;
    strcpy(full, zh->chroot);
    return strcat(full, prefix);
}

/* The server's paths with the chroot removed, in place. */
static void client_paths(zhandle_t *zh, struct String_vector *paths) {
    int i;
    for (i = 0; i < paths->count; i++) {
        char *client_path = sub_string(zh, paths->data[i]);
        if (client_path != paths->data[i]) {
            char *copy = strdup(client_path);
            free_duplicate_path(client_path, paths->data[i]);
            if (copy == NULL) continue;
            free(paths->data[i]);
            paths->data[i] = copy;
        }
    }
}

/* Called for the reply (rc = the reply header's error) and for the bare header the client fakes
 * when the connection is lost or the handle closes. */
static void on_reply(int rc, const void *data) {
    es_ephemerals_call_t *call = (es_ephemerals_call_t *) data;
    buffer_list_t *reply = call->entry->buffer;
    struct GetEphemeralsResponse res;
    int decoded = 0;
    memset(&res, 0, sizeof(res));
    if (rc == ZOK && reply != NULL && reply->buffer != NULL && reply->len >= REPLY_HEADER_BYTES) {
        struct iarchive *ia = create_buffer_iarchive(reply->buffer, reply->len);
        struct ReplyHeader header;
        if (deserialize_ReplyHeader(ia, "hdr", &header) >= 0 && deserialize_GetEphemeralsResponse(ia, "reply", &res) >= 0) decoded = 1;
        else rc = ZMARSHALLINGERROR;
        close_buffer_iarchive(&ia);
    }
    if (decoded) {
        client_paths(call->zh, &res.ephemerals);
        call->done(ZOK, &res.ephemerals, call->data);
        deallocate_GetEphemeralsResponse(&res);
    } else {
        call->done(rc == ZOK ? ZMARSHALLINGERROR : rc, NULL, call->data);
    }
    free(call);
}

int es_zoo_aget_ephemerals(zhandle_t *zh, const char *prefix, strings_completion_t completion, const void *data) {
    struct RequestHeader header;
    struct GetEphemeralsRequest req;
    struct oarchive *oa;
    es_ephemerals_call_t *call;
    int rc;
    if (zh == NULL || prefix == NULL || completion == NULL) return ZBADARGUMENTS;
    if (is_unrecoverable(zh)) return ZINVALIDSTATE;
    header.xid = get_xid();
    header.type = ES_GET_EPHEMERALS_OP;
    call = (es_ephemerals_call_t *) calloc(1, sizeof(*call));
    req.prefixPath = server_prefix(zh, prefix);
    oa = create_buffer_oarchive();
    if (call != NULL) call->entry = es_new_request_entry(header.xid, on_reply, call);
    if (call == NULL || call->entry == NULL || req.prefixPath == NULL || oa == NULL) {
        if (call != NULL) free(call->entry);
        free(call);
        free(req.prefixPath);
        if (oa != NULL) close_buffer_oarchive(&oa, 1);
        return ZSYSTEMERROR;
    }
    call->zh = zh;
    call->done = completion;
    call->data = data;
    rc = serialize_RequestHeader(oa, "header", &header) < 0 || serialize_GetEphemeralsRequest(oa, "req", &req) < 0 ? ZMARSHALLINGERROR : ZOK;
    free(req.prefixPath);
    if (rc == ZOK) rc = es_enqueue_request(zh, call->entry, get_buffer(oa), get_buffer_len(oa));
    close_buffer_oarchive(&oa, rc != ZOK);
    if (rc != ZOK) {
        free(call->entry);
        free(call);
    }
    return rc;
}
