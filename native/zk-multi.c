/*
 * es-lock-proxy: a ZooKeeper transaction (multi) whose results carry the server's answers as they
 * are: the created path and Stat of each create, the Stat of each setData, the error of each op.
 * See zk-multi.h for why zoo_amulti of the C client 3.8 cannot do this.
 *
 * The request is serialized with the client's public jute serializers and queued like the
 * client's own (zk-requests.c) with a plain "void" completion, so the client does not decode the
 * body: the completion reads the raw reply from the entry's buffer, which the client keeps until
 * the completion has returned.
 */
#include <stdlib.h>
#include <string.h>

#include <proto.h>
#include <recordio.h>
#include <zookeeper.h>
#include <zookeeper.jute.h>

#include "zk-multi.h"
#include "zk-requests.h"

/* A ReplyHeader: xid (4), zxid (8), err (4). */
#define REPLY_HEADER_BYTES 16

struct es_multi_call {
    zhandle_t *zh;
    completion_list_t *entry;   /* ours until queued; then the client's, alive during the completion */
    int count;
    es_multi_completion_t done;
    void *data;
    es_multi_result_t results[];
};

typedef struct es_multi_call es_multi_call_t;

/* The path as the server knows it: the chroot of the connect string prepended (prepend_string). */
static char *server_path(zhandle_t *zh, const char *path) {
    char *full;
    if (zh->chroot == NULL) return (char *) path;
    if (strcmp(path, "/") == 0) return strdup(zh->chroot);
    full = (char *) malloc(strlen(zh->chroot) + strlen(path) + 1);
    if (full == NULL) return NULL;
    strcpy(full, zh->chroot);
    return strcat(full, path);
}

/* Containers must be created with their own op code; TTL nodes are not supported here. */
static int create_op_type(int flags) {
    return flags == ZOO_CONTAINER ? ZOO_CREATE_CONTAINER_OP : ZOO_CREATE2_OP;
}

static int serialize_op(zhandle_t *zh, struct oarchive *oa, const es_multi_op_t *op) {
    int rc;
    char *path;
    struct MultiHeader header = { 0, 0, -1 };
    if (op->path == NULL) return ZBADARGUMENTS;
    path = server_path(zh, op->path);
    if (path == NULL) return ZSYSTEMERROR;
    switch (op->kind) {
    case ES_MULTI_CREATE: {
        struct CreateRequest req;
        header.type = create_op_type(op->flags);
        req.path = path;
        req.data.buff = (char *) op->data;
        req.data.len = op->data_len;
        req.acl = op->acl != NULL ? *op->acl : ZOO_OPEN_ACL_UNSAFE;
        req.flags = op->flags;
        rc = serialize_MultiHeader(oa, "multiheader", &header);
        rc = rc < 0 ? rc : serialize_CreateRequest(oa, "req", &req);
        break;
    }
    case ES_MULTI_DELETE: {
        struct DeleteRequest req = { path, op->version };
        header.type = ZOO_DELETE_OP;
        rc = serialize_MultiHeader(oa, "multiheader", &header);
        rc = rc < 0 ? rc : serialize_DeleteRequest(oa, "req", &req);
        break;
    }
    case ES_MULTI_SET_DATA: {
        struct SetDataRequest req;
        header.type = ZOO_SETDATA_OP;
        req.path = path;
        req.data.buff = (char *) op->data;
        req.data.len = op->data_len;
        req.version = op->version;
        rc = serialize_MultiHeader(oa, "multiheader", &header);
        rc = rc < 0 ? rc : serialize_SetDataRequest(oa, "req", &req);
        break;
    }
    case ES_MULTI_CHECK: {
        struct CheckVersionRequest req = { path, op->version };
        header.type = ZOO_CHECK_OP;
        rc = serialize_MultiHeader(oa, "multiheader", &header);
        rc = rc < 0 ? rc : serialize_CheckVersionRequest(oa, "req", &req);
        break;
    }
    default:
        rc = ZBADARGUMENTS;
    }
    free_duplicate_path(path, op->path);
    return rc < 0 ? (rc == ZBADARGUMENTS ? ZBADARGUMENTS : ZMARSHALLINGERROR) : ZOK;
}

static int serialize_request(zhandle_t *zh, struct oarchive *oa, int xid, int count, const es_multi_op_t *ops) {
    struct RequestHeader header = { xid, ZOO_MULTI_OP };
    struct MultiHeader end = { -1, 1, -1 };
    int i;
    int rc = serialize_RequestHeader(oa, "header", &header) < 0 ? ZMARSHALLINGERROR : ZOK;
    for (i = 0; rc == ZOK && i < count; i++) rc = serialize_op(zh, oa, &ops[i]);
    if (rc == ZOK && serialize_MultiHeader(oa, "multiheader", &end) < 0) rc = ZMARSHALLINGERROR;
    return rc;
}

static void copy_created_path(es_multi_call_t *call, es_multi_result_t *result, const char *path) {
    char *client_path = sub_string(call->zh, path);
    result->path = strdup(client_path);
    free_duplicate_path(client_path, path);
}

/* Decodes one sub-result by the type the server gave it. Returns < 0 on a malformed reply. */
static int read_result(es_multi_call_t *call, struct iarchive *ia, const struct MultiHeader *header, es_multi_result_t *result) {
    int rc = 0;
    result->rc = ZOK;
    switch (header->type) {
    case -1: {
        struct ErrorResponse error;
        rc = deserialize_ErrorResponse(ia, "error", &error);
        result->rc = error.err;
        break;
    }
    case ZOO_CREATE_OP: {
        struct CreateResponse res;
        memset(&res, 0, sizeof(res));
        rc = deserialize_CreateResponse(ia, "reply", &res);
        if (rc >= 0 && res.path != NULL) copy_created_path(call, result, res.path);
        deallocate_CreateResponse(&res);
        break;
    }
    case ZOO_CREATE2_OP:
    case ZOO_CREATE_CONTAINER_OP:
    case ZOO_CREATE_TTL_OP: {
        struct Create2Response res;
        memset(&res, 0, sizeof(res));
        rc = deserialize_Create2Response(ia, "reply", &res);
        if (rc >= 0 && res.path != NULL) copy_created_path(call, result, res.path);
        if (rc >= 0) {
            result->stat = res.stat;
            result->has_stat = 1;
        }
        deallocate_Create2Response(&res);
        break;
    }
    case ZOO_SETDATA_OP: {
        struct SetDataResponse res;
        rc = deserialize_SetDataResponse(ia, "reply", &res);
        if (rc >= 0) {
            result->stat = res.stat;
            result->has_stat = 1;
        }
        deallocate_SetDataResponse(&res);
        break;
    }
    case ZOO_DELETE_OP:
    case ZOO_CHECK_OP:
        break;
    default:
        rc = -1;
    }
    return rc;
}

/* The MultiResponse body: one header + result per op, then a "done" header. */
static int read_results(es_multi_call_t *call, struct iarchive *ia) {
    struct MultiHeader header;
    int i = 0;
    int first_error = ZOK;
    if (deserialize_MultiHeader(ia, "multiheader", &header) < 0) return ZMARSHALLINGERROR;
    while (!header.done) {
        es_multi_result_t *result;
        if (i >= call->count) return ZMARSHALLINGERROR;
        result = &call->results[i++];
        if (read_result(call, ia, &header, result) < 0) return ZMARSHALLINGERROR;
        if (first_error == ZOK && result->rc != ZOK && result->rc != ZRUNTIMEINCONSISTENCY) first_error = result->rc;
        if (deserialize_MultiHeader(ia, "multiheader", &header) < 0) return ZMARSHALLINGERROR;
    }
    return i == call->count ? first_error : ZMARSHALLINGERROR;
}

static void set_all(es_multi_call_t *call, int rc) {
    int i;
    for (i = 0; i < call->count; i++) call->results[i].rc = rc;
}

static void free_call(es_multi_call_t *call) {
    int i;
    for (i = 0; i < call->count; i++) free(call->results[i].path);
    free(call);
}

/*
 * The client calls this for the reply (rc = the reply header's error) and also for replies it
 * fakes when the connection is lost or the handle closes (a bare header carrying that error).
 */
static void on_reply(int rc, const void *data) {
    es_multi_call_t *call = (es_multi_call_t *) data;
    buffer_list_t *reply = call->entry->buffer;
    int64_t zxid = -1;
    int answered = 0;
    if (reply != NULL && reply->buffer != NULL && reply->len >= REPLY_HEADER_BYTES) {
        struct iarchive *ia = create_buffer_iarchive(reply->buffer, reply->len);
        struct ReplyHeader header;
        if (deserialize_ReplyHeader(ia, "hdr", &header) >= 0) zxid = header.zxid;
        /* A server that ran the transaction answers with a body even when an op failed; the
         * replies the client fakes for a lost connection or a closed handle are a bare header. */
        if (reply->len > REPLY_HEADER_BYTES && (rc == ZOK || rc <= ZAPIERROR)) {
            int body = read_results(call, ia);
            if (body == ZMARSHALLINGERROR) {
                rc = ZMARSHALLINGERROR;
            } else {
                answered = 1;
                if (rc == ZOK) rc = body;
            }
        }
        close_buffer_iarchive(&ia);
    }
    if (!answered) set_all(call, rc);
    call->done(rc, answered, zxid, call->count, call->results, call->data);
    free_call(call);
}

static es_multi_call_t *new_call(zhandle_t *zh, int xid, int count, es_multi_completion_t done, void *data) {
    es_multi_call_t *call = (es_multi_call_t *) calloc(1, sizeof(es_multi_call_t) + (size_t) count * sizeof(es_multi_result_t));
    if (call == NULL) return NULL;
    call->entry = es_new_request_entry(xid, on_reply, call);
    if (call->entry == NULL) {
        free(call);
        return NULL;
    }
    call->zh = zh;
    call->count = count;
    call->done = done;
    call->data = data;
    return call;
}

int es_zoo_amulti(zhandle_t *zh, int count, const es_multi_op_t *ops, es_multi_completion_t done, void *data) {
    struct oarchive *oa;
    es_multi_call_t *call;
    int xid;
    int rc;
    if (zh == NULL || count < 0 || (count > 0 && ops == NULL) || done == NULL) return ZBADARGUMENTS;
    if (is_unrecoverable(zh)) return ZINVALIDSTATE;
    xid = get_xid();
    call = new_call(zh, xid, count, done, data);
    if (call == NULL) return ZSYSTEMERROR;
    oa = create_buffer_oarchive();
    rc = oa == NULL ? ZSYSTEMERROR : serialize_request(zh, oa, xid, count, ops);
    if (rc == ZOK) rc = es_enqueue_request(zh, call->entry, get_buffer(oa), get_buffer_len(oa));
    if (oa != NULL) close_buffer_oarchive(&oa, rc != ZOK);
    if (rc != ZOK) {
        free(call->entry);
        free_call(call);
    }
    return rc;
}
