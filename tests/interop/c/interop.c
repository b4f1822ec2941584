/*
 * The C client (libnats) side of the interop tests, compiled by tests/Broker.Interop.Tests:
 *   gcc interop.c kvcross.c $(pkg-config --cflags --libs libnats)
 *
 *   interop selftest <url>                   pub/sub with headers, wildcards, queue group, auto-unsubscribe,
 *                                            no-responders, all on this client
 *   interop request <url> <subject> <count>  requests "hello-<i>" to a responder in another client, expects
 *                                            "HELLO-<i>"
 *   interop respond <url> <subject> <count>  answers <count> requests with the payload in upper case
 *   interop jspublish <url> <stream> <count> creates a memory stream <stream> on subject <stream>.>, publishes
 *                                            <count> messages with js_Publish (sequences 1..count), repeats the
 *                                            last message id (a duplicate), and checks the stream's message count
 *   interop kvcrossaccount <url-a> <url-i>   nats.c's KeyValueCrossAccount (kvcross.c): account A's KV bucket used
 *                                            by a user of I through service imports of $JS.API.> and $KV.>
 *   interop kvrepublish <url> <bucket> <count>
 *                                            nats.c's test_KeyValueRePublish: a bucket <bucket>_UPDATE cannot get a
 *                                            republish afterwards ("can not change RePublish"); bucket <bucket> with
 *                                            republish > to <bucket>.out.> gets <count> puts of key foo, each
 *                                            received on <bucket>.out.$KV.<bucket>.foo with Nats-Stream,
 *                                            Nats-Subject, Nats-Sequence and Nats-Last-Sequence
 *
 * Same contract as the nats.js scripts: progress lines, a JSON summary as the last line with "ok", exit code 0
 * exactly when ok. alarm() ends a hung run.
 */
#include <ctype.h>
#include <stdlib.h>
#include "interop.h"

#define DEADLINE_SECONDS 20

static char failure[512];

/*
 * Records the first failure (later ones are consequences) with libnats' own error text (e.g. the server's -ERR),
 * and returns 0 so callers can `return fail(...)`. Quotes and backslashes become ' so the summary stays JSON.
 */
int fail(const char *what, natsStatus s)
{
    if (failure[0] == '\0')
    {
        const char *detail = s == NATS_OK ? "" : nats_GetLastError(NULL);
        snprintf(failure, sizeof(failure), "%s: %s%s%s", what, s == NATS_OK ? "check failed" : natsStatus_GetText(s),
                 detail != NULL && detail[0] != '\0' ? " - " : "", detail != NULL ? detail : "");
        for (char *c = failure; *c != '\0'; c++)
        {
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '\'';
        }
    }
    return 0;
}

natsStatus open_connection(natsConnection **nc, const char *url, const char *name)
{
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, url);
    if (s == NATS_OK) s = natsOptions_SetName(opts, name);
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, TIMEOUT_MS);
    if (s == NATS_OK) s = natsConnection_Connect(nc, opts);
    natsOptions_Destroy(opts);
    return s;
}

static int data_is(natsMsg *msg, const char *expected)
{
    return natsMsg_GetDataLength(msg) == (int)strlen(expected)
        && memcmp(natsMsg_GetData(msg), expected, strlen(expected)) == 0;
}

/* Receives one message on `sub` and checks its subject. */
static int expect_subject(natsSubscription *sub, const char *subject, const char *what)
{
    natsMsg *msg = NULL;
    CHECK(natsSubscription_NextMsg(&msg, sub, TIMEOUT_MS), what);
    int same = strcmp(natsMsg_GetSubject(msg), subject) == 0;
    natsMsg_Destroy(msg);
    EXPECT(same, what);
    return 1;
}

static int selftest(const char *url, int *checks)
{
    natsConnection *nc = NULL;
    natsSubscription *plain = NULL, *star = NULL, *tail = NULL, *q1 = NULL, *q2 = NULL, *limited = NULL;
    natsMsg *msg = NULL;
    const char *value = NULL;

    CHECK(open_connection(&nc, url, "c-selftest"), "connect");

    /* Plain publish/subscribe, then a message with headers. */
    CHECK(natsConnection_SubscribeSync(&plain, nc, "c.plain"), "subscribe c.plain");
    CHECK(natsConnection_PublishString(nc, "c.plain", "hello"), "publish");
    CHECK(natsSubscription_NextMsg(&msg, plain, TIMEOUT_MS), "receive plain");
    EXPECT(data_is(msg, "hello"), "plain payload");
    natsMsg_Destroy(msg);
    msg = NULL;
    (*checks)++;

    CHECK(natsMsg_Create(&msg, "c.plain", NULL, "with-headers", 12), "create message");
    CHECK(natsMsgHeader_Set(msg, "X-Client", "libnats"), "set header");
    CHECK(natsMsgHeader_Add(msg, "X-Multi", "one"), "add header");
    CHECK(natsMsgHeader_Add(msg, "X-Multi", "two"), "add header");
    CHECK(natsConnection_PublishMsg(nc, msg), "publish with headers");
    natsMsg_Destroy(msg);
    msg = NULL;
    CHECK(natsSubscription_NextMsg(&msg, plain, TIMEOUT_MS), "receive with headers");
    EXPECT(data_is(msg, "with-headers"), "payload with headers");
    CHECK(natsMsgHeader_Get(msg, "X-Client", &value), "get header");
    EXPECT(strcmp(value, "libnats") == 0, "header value");
    const char **values = NULL;
    int count = 0;
    CHECK(natsMsgHeader_Values(msg, "X-Multi", &values, &count), "get header values");
    int multi_ok = count == 2 && strcmp(values[0], "one") == 0 && strcmp(values[1], "two") == 0;
    free((void *)values);
    EXPECT(multi_ok, "multi-valued header");
    natsMsg_Destroy(msg);
    msg = NULL;
    (*checks)++;

    /* Wildcards: c.w.* sees one token, c.w.> every depth. */
    CHECK(natsConnection_SubscribeSync(&star, nc, "c.w.*"), "subscribe c.w.*");
    CHECK(natsConnection_SubscribeSync(&tail, nc, "c.w.>"), "subscribe c.w.>");
    CHECK(natsConnection_PublishString(nc, "c.w.a.b", "deep"), "publish c.w.a.b");
    CHECK(natsConnection_PublishString(nc, "c.w.a", "shallow"), "publish c.w.a");
    if (!expect_subject(tail, "c.w.a.b", "c.w.> first message")) return 0;
    if (!expect_subject(tail, "c.w.a", "c.w.> second message")) return 0;
    if (!expect_subject(star, "c.w.a", "c.w.* message")) return 0;
    CHECK(natsConnection_FlushTimeout(nc, TIMEOUT_MS), "flush");
    uint64_t pending = 0;
    CHECK(natsSubscription_QueuedMsgs(star, &pending), "queued");
    EXPECT(pending == 0, "c.w.* received a message with two tokens after c.w");
    (*checks)++;

    /* A queue group of two: each message once in total. */
    CHECK(natsConnection_QueueSubscribeSync(&q1, nc, "c.q", "workers"), "queue subscribe 1");
    CHECK(natsConnection_QueueSubscribeSync(&q2, nc, "c.q", "workers"), "queue subscribe 2");
    for (int i = 0; i < 20; i++)
    {
        CHECK(natsConnection_PublishString(nc, "c.q", "work"), "publish c.q");
    }
    CHECK(natsConnection_FlushTimeout(nc, TIMEOUT_MS), "flush");
    uint64_t n1 = 0, n2 = 0;
    CHECK(natsSubscription_QueuedMsgs(q1, &n1), "queued 1");
    CHECK(natsSubscription_QueuedMsgs(q2, &n2), "queued 2");
    EXPECT(n1 + n2 == 20, "queue group did not get each message exactly once");
    (*checks)++;

    /* Auto-unsubscribe after 2 (UNSUB sid 2). */
    CHECK(natsConnection_SubscribeSync(&limited, nc, "c.max"), "subscribe c.max");
    CHECK(natsSubscription_AutoUnsubscribe(limited, 2), "auto-unsubscribe");
    for (int i = 0; i < 5; i++)
    {
        CHECK(natsConnection_PublishString(nc, "c.max", "m"), "publish c.max");
    }
    CHECK(natsConnection_FlushTimeout(nc, TIMEOUT_MS), "flush");
    int delivered = 0;
    while (natsSubscription_NextMsg(&msg, limited, 200) == NATS_OK)
    {
        natsMsg_Destroy(msg);
        msg = NULL;
        delivered++;
    }
    EXPECT(delivered == 2, "auto-unsubscribe did not stop at 2");
    (*checks)++;

    /* Nobody subscribed: the request fails with no-responders instead of timing out. */
    natsStatus s = natsConnection_RequestString(&msg, nc, "c.nobody", "anyone?", 15000);
    EXPECT(s == NATS_NO_RESPONDERS, "request without responders did not fail with NATS_NO_RESPONDERS");
    (*checks)++;

    natsSubscription_Destroy(plain);
    natsSubscription_Destroy(star);
    natsSubscription_Destroy(tail);
    natsSubscription_Destroy(q1);
    natsSubscription_Destroy(q2);
    natsSubscription_Destroy(limited);
    natsConnection_Destroy(nc);
    return 1;
}

static int request(const char *url, const char *subject, int count)
{
    natsConnection *nc = NULL;
    CHECK(open_connection(&nc, url, "c-requester"), "connect");
    for (int i = 0; i < count; i++)
    {
        char payload[32], expected[32];
        snprintf(payload, sizeof(payload), "hello-%d", i);
        snprintf(expected, sizeof(expected), "HELLO-%d", i);
        natsMsg *reply = NULL;
        CHECK(natsConnection_RequestString(&reply, nc, subject, payload, TIMEOUT_MS), "request");
        int same = data_is(reply, expected);
        natsMsg_Destroy(reply);
        EXPECT(same, "reply payload");
    }
    natsConnection_Destroy(nc);
    return 1;
}

static int respond(const char *url, const char *subject, int count)
{
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    CHECK(open_connection(&nc, url, "c-responder"), "connect");
    CHECK(natsConnection_SubscribeSync(&sub, nc, subject), "subscribe");
    CHECK(natsConnection_FlushTimeout(nc, TIMEOUT_MS), "flush");
    printf("{\"ready\":true}\n");
    fflush(stdout);
    for (int i = 0; i < count; i++)
    {
        natsMsg *msg = NULL;
        CHECK(natsSubscription_NextMsg(&msg, sub, 15000), "wait for request");
        char upper[256];
        int length = natsMsg_GetDataLength(msg);
        if (length >= (int)sizeof(upper)) length = sizeof(upper) - 1;
        for (int j = 0; j < length; j++) upper[j] = (char)toupper((unsigned char)natsMsg_GetData(msg)[j]);
        upper[length] = '\0';
        natsStatus s = natsMsg_GetReply(msg) == NULL
            ? NATS_INVALID_SUBJECT
            : natsConnection_PublishString(nc, natsMsg_GetReply(msg), upper);
        natsMsg_Destroy(msg);
        CHECK(s, "reply");
    }
    CHECK(natsConnection_FlushTimeout(nc, TIMEOUT_MS), "flush");
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
    return 1;
}

static int jspublish(const char *url, const char *stream, int count)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsErrCode jerr = 0;
    CHECK(open_connection(&nc, url, "c-jetstream"), "connect");
    CHECK(natsConnection_JetStream(&js, nc, NULL), "jetstream context");

    char subjects[128], subject[160], id[32], payload[32];
    snprintf(subjects, sizeof(subjects), "%s.>", stream);
    const char *list[1] = {subjects};
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = stream;
    config.Subjects = list;
    config.SubjectsLen = 1;
    config.Storage = js_MemoryStorage;
    jsStreamInfo *info = NULL;
    CHECK(js_AddStream(&info, js, &config, NULL, &jerr), "add stream");
    jsStreamInfo_Destroy(info);

    for (int i = 1; i <= count + 1; i++)
    {
        /* The last round repeats the previous message id: the stream answers with the original sequence. */
        int n = i <= count ? i : count;
        snprintf(subject, sizeof(subject), "%s.%d", stream, n % 3);
        snprintf(id, sizeof(id), "id-%d", n);
        snprintf(payload, sizeof(payload), "msg-%d", n);
        jsPubOptions options;
        jsPubOptions_Init(&options);
        options.MsgId = id;
        jsPubAck *ack = NULL;
        CHECK(js_Publish(&ack, js, subject, payload, (int)strlen(payload), &options, &jerr), "js publish");
        int right = ack->Sequence == (uint64_t)n && strcmp(ack->Stream, stream) == 0 && ack->Duplicate == (i > count);
        jsPubAck_Destroy(ack);
        EXPECT(right, "pub ack sequence, stream or duplicate flag");
    }

    CHECK(js_GetStreamInfo(&info, js, stream, NULL, &jerr), "stream info");
    int stored = info->State.Msgs == (uint64_t)count && info->State.LastSeq == (uint64_t)count;
    jsStreamInfo_Destroy(info);
    EXPECT(stored, "stream state after the publishes");

    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 1;
}

/* Receives one republished put and checks its payload and the headers nats-server adds. */
static int expect_republished(natsSubscription *sub, const char *bucket, int n)
{
    char subject[160], stream[160], payload[32], sequence[24], last[24];
    snprintf(subject, sizeof(subject), "%s.out.$KV.%s.foo", bucket, bucket);
    snprintf(stream, sizeof(stream), "KV_%s", bucket);
    snprintf(payload, sizeof(payload), "value-%d", n);
    snprintf(sequence, sizeof(sequence), "%d", n);
    snprintf(last, sizeof(last), "%d", n - 1);
    natsMsg *msg = NULL;
    const char *value = NULL;
    CHECK(natsSubscription_NextMsg(&msg, sub, TIMEOUT_MS), "republished put");
    int right = strcmp(natsMsg_GetSubject(msg), subject) == 0 && data_is(msg, payload)
        && natsMsgHeader_Get(msg, "Nats-Stream", &value) == NATS_OK && strcmp(value, stream) == 0
        && natsMsgHeader_Get(msg, JSSubject, &value) == NATS_OK && strcmp(value, subject + strlen(bucket) + 5) == 0
        && natsMsgHeader_Get(msg, "Nats-Sequence", &value) == NATS_OK && strcmp(value, sequence) == 0
        && natsMsgHeader_Get(msg, JSLastSequence, &value) == NATS_OK && strcmp(value, last) == 0;
    natsMsg_Destroy(msg);
    EXPECT(right, "republished subject, payload or headers");
    return 1;
}

static int kvrepublish(const char *url, const char *bucket, int count)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    CHECK(open_connection(&nc, url, "c-kv-republish"), "connect");
    CHECK(natsConnection_JetStream(&js, nc, NULL), "jetstream context");

    char update[128], destination[160], out[160], payload[32];
    snprintf(update, sizeof(update), "%s_UPDATE", bucket);
    kvConfig config;
    kvConfig_Init(&config);
    config.Bucket = update;
    config.StorageType = js_MemoryStorage;
    CHECK(js_CreateKeyValue(&kv, js, &config), "create bucket");
    kvStore_Destroy(kv);
    kv = NULL;

    /* As nats.c's test: the same bucket again with a republish is an update the server refuses. */
    jsRePublish republish;
    jsRePublish_Init(&republish);
    snprintf(destination, sizeof(destination), "%s.out.>", bucket);
    republish.Source = ">";
    republish.Destination = destination;
    config.RePublish = &republish;
    natsStatus s = js_CreateKeyValue(&kv, js, &config);
    const char *error = nats_GetLastError(NULL);
    EXPECT(s == NATS_ERR && error != NULL && strstr(error, "can not change RePublish") != NULL, "republish added to an existing bucket");

    config.Bucket = bucket;
    CHECK(js_CreateKeyValue(&kv, js, &config), "create bucket with republish");
    char stream[160];
    snprintf(stream, sizeof(stream), "KV_%s", bucket);
    jsStreamInfo *info = NULL;
    CHECK(js_GetStreamInfo(&info, js, stream, NULL, NULL), "stream info");
    int set = info->Config != NULL && info->Config->RePublish != NULL && strcmp(info->Config->RePublish->Destination, destination) == 0;
    jsStreamInfo_Destroy(info);
    EXPECT(set, "the stream's republish");

    natsSubscription *sub = NULL;
    snprintf(out, sizeof(out), "%s.out.>", bucket);
    CHECK(natsConnection_SubscribeSync(&sub, nc, out), "subscribe to the republish");
    CHECK(natsConnection_Flush(nc), "flush");
    for (int i = 1; i <= count; i++)
    {
        snprintf(payload, sizeof(payload), "value-%d", i);
        CHECK(kvStore_PutString(NULL, kv, "foo", payload), "put");
        if (!expect_republished(sub, bucket, i)) return 0;
    }

    natsSubscription_Destroy(sub);
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 1;
}

int main(int argc, char **argv)
{
    alarm(DEADLINE_SECONDS);
    int two = argc >= 3 && strcmp(argv[1], "selftest") == 0;
    int three = argc >= 4 && strcmp(argv[1], "kvcrossaccount") == 0;
    if (argc < 3 || (!two && !three && argc < 5))
    {
        fprintf(stderr, "usage: %s selftest <url> | request|respond <url> <subject> <count> | jspublish|kvrepublish <url> <stream> <count>"
                        " | kvcrossaccount <url-a> <url-i>\n", argv[0]);
        return 2;
    }

    int ok, checks = 0;
    const char *mode = argv[1];
    if (two)
    {
        ok = selftest(argv[2], &checks);
    }
    else if (three)
    {
        ok = kvcrossaccount(argv[2], argv[3], &checks);
    }
    else
    {
        checks = atoi(argv[4]);
        ok = strcmp(mode, "request") == 0 ? request(argv[2], argv[3], checks)
           : strcmp(mode, "respond") == 0 ? respond(argv[2], argv[3], checks)
           : strcmp(mode, "jspublish") == 0 ? jspublish(argv[2], argv[3], checks)
           : strcmp(mode, "kvrepublish") == 0 ? kvrepublish(argv[2], argv[3], checks)
           : fail("unknown mode", NATS_OK);
    }
    nats_Close();

    if (ok)
    {
        printf("{\"ok\":true,\"mode\":\"%s\",\"checks\":%d}\n", mode, checks);
        return 0;
    }
    printf("{\"ok\":false,\"mode\":\"%s\",\"error\":\"%s\"}\n", mode, failure);
    return 1;
}
