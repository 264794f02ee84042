/*
 * es-lock-proxy: ZooKeeper multi (transaction) with create2 results, on the C client 3.8.
 *
 * Why not zoo_amulti: the C client 3.8 refuses ZOO_CREATE2_OP inside a multi, and it decodes each
 * sub-result by the type of the REQUEST it sent instead of the type of the RESPONSE the server
 * sent. A container create is answered with a Create2Response (path + Stat) by every server, and
 * a create2 by servers >= 3.9 (ZOOKEEPER-4026): the C client then reads the Stat as the next
 * header and mis-parses the rest of the reply. This implementation sends the ops itself and
 * decodes the reply by the server's response types.
 */
#ifndef ES_ZK_MULTI_H_
#define ES_ZK_MULTI_H_

#include <stdint.h>
#include <zookeeper.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ZooKeeper op codes (proto.h) of the ops a transaction may hold. */
#define ES_MULTI_CREATE 1
#define ES_MULTI_DELETE 2
#define ES_MULTI_SET_DATA 5
#define ES_MULTI_CHECK 13

typedef struct es_multi_op {
    int kind;                       /* ES_MULTI_* */
    const char *path;
    const char *data;               /* create, setData */
    int data_len;
    int flags;                      /* create: ZOO_PERSISTENT, ZOO_EPHEMERAL, ZOO_SEQUENCE, ZOO_CONTAINER... */
    int version;                    /* delete, setData, check; -1: any */
    const struct ACL_vector *acl;   /* create; NULL: ZOO_OPEN_ACL_UNSAFE */
} es_multi_op_t;

typedef struct es_multi_result {
    int rc;                         /* ZOK, the op's error, or ZRUNTIMEINCONSISTENCY after a failed op */
    char *path;                     /* create: the created path (chroot removed), else NULL */
    int has_stat;                   /* 1 when the server sent a Stat (setData, create2 on >= 3.9, container) */
    struct Stat stat;
} es_multi_result_t;

/*
 * Called once, from inside zookeeper_process (or zookeeper_close): `rc` is ZOK, the first failing
 * op's error, or a request-level error (ZCONNECTIONLOSS, ZCLOSING, ZMARSHALLINGERROR...).
 * `answered` is 1 when `results` hold the server's answer for each op, 0 for a request-level
 * error (the transaction's outcome is then unknown, or it was not sent). `zxid` is the zxid of the
 * reply (the transaction's when it committed), -1 when no reply arrived. `results` are valid
 * during the call only.
 */
typedef void (*es_multi_completion_t)(int rc, int answered, int64_t zxid, int count, es_multi_result_t *results, void *data);

/* Queues the transaction. Returns ZOK (the completion will be called) or an error (it will not). */
int es_zoo_amulti(zhandle_t *zh, int count, const es_multi_op_t *ops, es_multi_completion_t done, void *data);

#ifdef __cplusplus
}
#endif

#endif /* ES_ZK_MULTI_H_ */
