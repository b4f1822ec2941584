/*
 * nats.c's test_KeyValueCrossAccount (nats.c v3.4.1 test/test.c), step by step, against a server configured as that
 * test configures it: account A has JetStream and exports $JS.API.> and $KV.> as services and accI.> as a stream;
 * account I imports them, the services under fromA. A user of A (url_a) and a user of I (url_i, inbox prefix accI,
 * JetStream prefix fromA) use the same bucket "Map": both watch key "map", I puts, updates, purges and deletes it,
 * both read it, A's stream ends empty after I's purge of the delete markers, and a new context of I (prefix with a
 * trailing dot) writes to it again.
 */
#include "interop.h"

/* The next entry of a watcher: key "map" with `value`, or (value NULL) the operation `op`. */
static int expect_entry(kvWatcher *w, const char *value, kvOperation op, const char *what)
{
    kvEntry *e = NULL;
    CHECK(kvWatcher_Next(&e, w, TIMEOUT_MS), what);
    int right = e != NULL && strcmp(kvEntry_Key(e), "map") == 0
        && (value == NULL ? kvEntry_Operation(e) == op : strcmp(kvEntry_ValueString(e), value) == 0);
    kvEntry_Destroy(e);
    EXPECT(right, what);
    return 1;
}

/* The value of key "map" read through `kv`. */
static int expect_value(kvStore *kv, const char *value, const char *what)
{
    kvEntry *e = NULL;
    CHECK(kvStore_Get(&e, kv, "map"), what);
    int right = strcmp(kvEntry_Key(e), "map") == 0 && strcmp(kvEntry_ValueString(e), value) == 0;
    kvEntry_Destroy(e);
    EXPECT(right, what);
    return 1;
}

/* A watcher of key "map", after its initial "no entries yet" marker. */
static int watch(kvWatcher **w, kvStore *kv, const char *what)
{
    kvEntry *e = NULL;
    CHECK(kvStore_Watch(w, kv, "map", NULL), what);
    CHECK(kvWatcher_Next(&e, *w, TIMEOUT_MS), what);
    EXPECT(e == NULL, what);
    return 1;
}

int kvcrossaccount(const char *url_a, const char *url_i, int *checks)
{
    natsConnection *nc1 = NULL, *nc2 = NULL;
    natsOptions *opts = NULL;
    jsCtx *js1 = NULL, *js2 = NULL;
    kvStore *kv1 = NULL, *kv2 = NULL;
    kvWatcher *w1 = NULL, *w2 = NULL;
    kvEntry *e = NULL;
    uint64_t rev = 0;
    kvConfig kvc;
    jsOptions o;

    CHECK(open_connection(&nc1, url_a, "c-kv-a"), "connect a");
    CHECK(natsConnection_JetStream(&js1, nc1, NULL), "context a");
    kvConfig_Init(&kvc);
    kvc.Bucket = "Map";
    CHECK(js_CreateKeyValue(&kv1, js1, &kvc), "create kv a");
    if (!watch(&w1, kv1, "watch a")) return 0;

    CHECK(natsOptions_Create(&opts), "options i");
    CHECK(natsOptions_SetURL(opts, url_i), "options i");
    CHECK(natsOptions_SetTimeout(opts, TIMEOUT_MS), "options i");
    CHECK(natsOptions_SetAllowReconnect(opts, false), "options i");
    CHECK(natsOptions_SetCustomInboxPrefix(opts, "accI"), "inbox prefix i");
    CHECK(natsConnection_Connect(&nc2, opts), "connect i");
    jsOptions_Init(&o);
    o.Prefix = "fromA";
    CHECK(natsConnection_JetStream(&js2, nc2, &o), "context i");
    CHECK(js_CreateKeyValue(&kv2, js2, &kvc), "create kv i");
    if (!watch(&w2, kv2, "watch i")) return 0;

    CHECK(kvStore_PutString(&rev, kv2, "map", "value"), "put from i");
    if (!expect_value(kv1, "value", "get a") || !expect_value(kv2, "value", "get i")
        || !expect_entry(w1, "value", kvOp_Put, "watch a put") || !expect_entry(w2, "value", kvOp_Put, "watch i put")) return 0;

    CHECK(kvStore_UpdateString(NULL, kv2, "map", "updated", rev), "update from i");
    if (!expect_value(kv1, "updated", "get a updated") || !expect_value(kv2, "updated", "get i updated")
        || !expect_entry(w1, "updated", kvOp_Put, "watch a update") || !expect_entry(w2, "updated", kvOp_Put, "watch i update")) return 0;

    CHECK(kvStore_Purge(kv2, "map", NULL), "purge from i");
    if (!expect_entry(w1, NULL, kvOp_Purge, "watch a purge") || !expect_entry(w2, NULL, kvOp_Purge, "watch i purge")) return 0;

    kvPurgeOptions po;
    kvPurgeOptions_Init(&po);
    po.DeleteMarkersOlderThan = -1;
    CHECK(kvStore_PurgeDeletes(kv2, &po), "purge deletes from i");
    jsStreamInfo *si = NULL;
    CHECK(js_GetStreamInfo(&si, js1, "KV_Map", NULL, NULL), "stream info a");
    int empty = si->State.Msgs == 0;
    jsStreamInfo_Destroy(si);
    EXPECT(empty, "stream empty after purging the delete markers");

    CHECK(kvStore_Delete(kv2, "map"), "delete from i");
    natsStatus gone = kvStore_Get(&e, kv1, "map");
    kvEntry_Destroy(e);
    EXPECT(gone == NATS_NOT_FOUND, "key gone for a");

    /* A new context of I with a trailing dot in its prefix reaches the same bucket. */
    kvWatcher_Destroy(w2);
    kvStore_Destroy(kv2);
    jsCtx_Destroy(js2);
    o.Prefix = "fromA.";
    CHECK(natsConnection_JetStream(&js2, nc2, &o), "context i with trailing dot");
    CHECK(js_CreateKeyValue(&kv2, js2, &kvc), "create kv i again");
    CHECK(kvStore_PutString(NULL, kv2, "map", "value2"), "put from i again");
    if (!expect_value(kv1, "value2", "get a value2")) return 0;

    kvWatcher_Destroy(w1);
    kvStore_Destroy(kv1);
    kvStore_Destroy(kv2);
    jsCtx_Destroy(js1);
    jsCtx_Destroy(js2);
    natsOptions_Destroy(opts);
    natsConnection_Destroy(nc1);
    natsConnection_Destroy(nc2);
    *checks = 15;
    return 1;
}
