/*
 * es-lock-proxy: the ZooKeeper C client 3.8's send queue, wrapped: every request in one send(2),
 * one TCP segment, and a failed send left to zookeeper_process (see the wrapper below).
 *
 * The client sends a request's 4-byte length and its body in two send calls (src/zookeeper.c,
 * send_buffer). On its TCP_NODELAY socket those are two segments: two trips through the
 * loopback stack in the sender, and the server reads the length and the body apart. Our own
 * requests (zk-requests.c) are queued framed already: the length in front of the body, and an
 * offset (4) that tells send_buffer the length has gone, so it sends both in one call. This
 * frames the client's own requests (get, children, create, delete, exists, ...) the same way,
 * just before they are sent: every request function of the client queues its buffer at the
 * tail of the send queue and then calls adaptor_send_queue, which the link wraps
 * (--wrap=adaptor_send_queue, binding.gyp; GNU ld, so Linux only). Buffers queued at the front
 * (pings, auth, watch re-registration) and any buffer that has begun to go out are left as
 * they are: they are sent as the client sends them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "zk_adaptor.h"

int __real_adaptor_send_queue(zhandle_t *zh, int timeout);
int __wrap_adaptor_send_queue(zhandle_t *zh, int timeout);

/* On a failed allocation the buffer stays as it was, which the client sends in two calls. */
static void frame(buffer_list_t *buffer) {
    char *framed = (char *) malloc((size_t) buffer->len + 4);
    uint32_t prefix = htonl((uint32_t) buffer->len);
    if (framed == NULL) return;
    memcpy(framed, &prefix, 4);
    memcpy(framed + 4, buffer->buffer, (size_t) buffer->len);
    free(buffer->buffer);
    buffer->buffer = framed;
    buffer->len += 4;
    buffer->curr_offset = 4;
}

/*
 * A send that fails here is reported as no failure: zookeeper_process sees the broken connection
 * at its next turn (the socket polls readable or in error) and does what a lost connection needs,
 * all in one place: closes the socket, fails every outstanding request with ZCONNECTIONLOSS, in
 * order, and reports the session as connecting.
 *
 * Why: on a failed send, the C client's request functions (nonblocking_send in src/zookeeper.c)
 * close the socket themselves and do nothing else. The requests already sent on that connection
 * stay in the list of sent requests although their replies can never come; the next connection
 * sends what was still queued, the first reply to it does not match the oldest entry of that
 * list, and the client fails every outstanding request with ZRUNTIMEINCONSISTENCY, including
 * those the server has just applied on the new connection. No "connecting" event is raised for
 * the silent close either. A connection reset under load (a flapping link) was enough.
 */
int __wrap_adaptor_send_queue(zhandle_t *zh, int timeout) {
    buffer_list_t *tail;
    int rc;
    lock_buffer_list(&zh->to_send);
    tail = zh->to_send.last;
    /* Nothing of it sent yet, not even its length (a framed buffer starts at 4). */
    if (tail != NULL && tail->curr_offset == 0 && tail->buffer != NULL) frame(tail);
    unlock_buffer_list(&zh->to_send);
    rc = __real_adaptor_send_queue(zh, timeout);
    return rc < 0 ? 0 : rc;
}
