/*
 * es-lock-proxy: see zk-requests.h. The queueing mirrors do_add_completion and queue_buffer_bytes
 * of the C client (src/zookeeper.c, Apache License 2.0): the entry goes to zh->sent_requests and
 * the bytes to zh->to_send in one critical section, so replies match requests in order.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <proto.h>
#include <recordio.h>
#include <zookeeper.h>
#include <zookeeper.jute.h>

#include "zk-close.h"
#include "zk-requests.h"

completion_list_t *es_new_request_entry(int xid, void_completion_t completion, const void *data) {
    completion_list_t *entry = (completion_list_t *) calloc(1, sizeof(completion_list_t));
    if (entry == NULL) return NULL;
    entry->xid = xid;
    entry->c.type = COMPLETION_VOID;
    entry->c.void_result = completion;
    entry->data = data;
    return entry;
}

static void append_entry(completion_head_t *list, completion_list_t *entry) {
    if (list->last != NULL) list->last->next = entry;
    else list->head = entry;
    list->last = entry;
}

static void append_buffer(buffer_head_t *list, buffer_list_t *buffer) {
    if (list->last != NULL) list->last->next = buffer;
    else list->head = buffer;
    list->last = buffer;
}

/*
 * The C client's send_buffer writes a request's 4-byte length and its bytes in two send() calls,
 * and with TCP_NODELAY that is two segments for the server to read. A buffer whose curr_offset
 * starts at 4 skips the length (send_buffer takes the first 4 bytes as sent, the way the client
 * primes its own input buffers); framing the length into the bytes sends the request in one call.
 * send_buffer's bookkeeping holds: it sends buffer[curr_offset - 4 .. len) and is done at
 * curr_offset == len + 4.
 */
static buffer_list_t *framed_buffer(const char *bytes, int length) {
    buffer_list_t *buffer = (buffer_list_t *) calloc(1, sizeof(*buffer));
    char *framed = (char *) malloc((size_t) length + 4);
    uint32_t prefix = htonl((uint32_t) length);
    if (buffer == NULL || framed == NULL) {
        free(buffer);
        free(framed);
        return NULL;
    }
    memcpy(framed, &prefix, 4);
    memcpy(framed + 4, bytes, (size_t) length);
    buffer->buffer = framed;
    buffer->len = length + 4;
    buffer->curr_offset = 4;
    return buffer;
}

int es_enqueue_request(zhandle_t *zh, completion_list_t *entry, char *bytes, int length) {
    int rc = ZOK;
    buffer_list_t *buffer = framed_buffer(bytes, length);
    if (buffer == NULL) return ZSYSTEMERROR;
    enter_critical(zh);
    lock_completion_list(&zh->sent_requests);
    if (zh->close_requested == 1) rc = ZINVALIDSTATE;
    else append_entry(&zh->sent_requests, entry);
    unlock_completion_list(&zh->sent_requests);
    if (rc == ZOK) {
        lock_buffer_list(&zh->to_send);
        append_buffer(&zh->to_send, buffer);
        unlock_buffer_list(&zh->to_send);
    }
    leave_critical(zh);
    if (rc != ZOK) {
        free(buffer->buffer);
        free(buffer);
        return rc;
    }
    free(bytes);
    /* Send now if we can, like the client's own requests; a failed send is left to
     * zookeeper_process, which closes the socket and fails the queued requests in order. */
    adaptor_send_queue(zh, 0);
    return ZOK;
}

int es_zoo_aclose_session(zhandle_t *zh, void_completion_t completion, const void *data) {
    struct RequestHeader header;
    struct oarchive *oa;
    completion_list_t *entry;
    int rc;
    if (zh == NULL || completion == NULL) return ZBADARGUMENTS;
    if (is_unrecoverable(zh)) return ZINVALIDSTATE;
    header.xid = get_xid();
    header.type = ZOO_CLOSE_OP;
    entry = es_new_request_entry(header.xid, completion, data);
    oa = create_buffer_oarchive();
    if (entry == NULL || oa == NULL) {
        free(entry);
        if (oa != NULL) close_buffer_oarchive(&oa, 1);
        return ZSYSTEMERROR;
    }
    rc = serialize_RequestHeader(oa, "header", &header) < 0 ? ZMARSHALLINGERROR : ZOK;
    if (rc == ZOK) rc = es_enqueue_request(zh, entry, get_buffer(oa), get_buffer_len(oa));
    close_buffer_oarchive(&oa, rc != ZOK);
    if (rc != ZOK) free(entry);
    return rc;
}

void es_zoo_drop_connection(zhandle_t *zh) {
    if (zh == NULL || zh->fd->sock == -1) return;
    close_zsock(zh->fd);
    zh->state = ZOO_NOTCONNECTED_STATE;
}
