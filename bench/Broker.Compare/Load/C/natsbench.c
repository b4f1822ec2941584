// The C load generator of the comparison harness: libnats (the official NATS C client) used as an application uses it,
// so each core row has a third, independent ratio beside the lean generator's and NATS.Client.Core's.
//
//   natsbench pubsub URL SUBJECT PAYLOAD COUNT PUBLISHERS SUBSCRIBERS [SUBSCRIBER_URL]
//   natsbench reqrep URL SUBJECT PAYLOAD COUNT CLIENTS SERVICES QUEUE(0|1)
//
// pubsub: every subscriber (its own connection, unlimited pending) must receive COUNT messages of PAYLOAD bytes; the
// publishers (one connection and thread each) share COUNT. Without subscribers the run ends when a flush after the
// last publish returns. With SUBSCRIBER_URL (the other server of a leaf node link) the subscribers connect there and
// publishing starts once their interest reached URL: a watcher subscribes to SUBJECT.link there after them, and a
// probe on the first publisher's connection publishes to it every 20 ms until it arrives (30 s at most). reqrep (connections with SendAsap, as an application tuned for round trips sets it): each client thread makes COUNT requests one at a time (natsConnection_Request), the
// services answer each (in a queue group when QUEUE is 1). Prints one line: "units elapsed_ns p50_us p99_us" (the
// percentiles 0 for pubsub). Exit code 0 on success; an error line on stderr otherwise.
#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fail(const char *what, natsStatus s)
{
    fprintf(stderr, "natsbench: %s: %s\n", what, natsStatus_GetText(s));
    nats_PrintLastErrorStack(stderr);
    exit(2);
}

static natsConnection *connect_to(const char *url, const char *name, bool sendAsap)
{
    natsOptions *opts = NULL;
    natsConnection *nc = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, url);
    if (s == NATS_OK) s = natsOptions_SetName(opts, name);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 10000);
    // Without it libnats's flusher thread sends a lone request or reply about a millisecond later, and the
    // request/reply rows would measure that delay on both servers alike.
    if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, sendAsap);
    if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
    natsOptions_Destroy(opts);
    if (s != NATS_OK) fail("connect", s);
    return nc;
}

typedef struct
{
    pthread_mutex_t lock;
    pthread_cond_t done;
    int64_t expected;
    int64_t received;
    int payload;
    int bad;
    int64_t finished_at;
} receiver;

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    receiver *r = closure;
    if (natsMsg_GetDataLength(msg) != r->payload) r->bad = 1;
    natsMsg_Destroy(msg);
    // One delivery thread per subscription: only the final count needs the lock.
    if (++r->received == r->expected)
    {
        pthread_mutex_lock(&r->lock);
        r->finished_at = now_ns();
        pthread_cond_signal(&r->done);
        pthread_mutex_unlock(&r->lock);
    }
}

typedef struct
{
    natsConnection *nc;
    const char *subject;
    const char *data;
    int payload;
    int64_t count;
    int64_t finished_at;
    int64_t *latencies;
    int queue;
} worker;

static void *publish_all(void *arg)
{
    worker *w = arg;
    natsStatus s = NATS_OK;
    for (int64_t i = 0; i < w->count && s == NATS_OK; i++)
        s = natsConnection_Publish(w->nc, w->subject, w->data, w->payload);
    if (s == NATS_OK) s = natsConnection_FlushTimeout(w->nc, 60000);
    if (s != NATS_OK) fail("publish", s);
    w->finished_at = now_ns();
    return NULL;
}

// Returns once a message published on pub (a connection to the publishers' server) reaches a subscription made on
// subUrl after every subscriber's (see the header); the servers send interest over the link in the order they take it.
static void wait_for_link(const char *subUrl, natsConnection *pub, const char *subject)
{
    char linkSubject[512];
    snprintf(linkSubject, sizeof(linkSubject), "%s.link", subject);
    natsConnection *watcher = connect_to(subUrl, "c-link-watch", false);
    natsSubscription *sub = NULL;
    natsStatus s = natsConnection_SubscribeSync(&sub, watcher, linkSubject);
    if (s == NATS_OK) s = natsConnection_FlushTimeout(watcher, 10000);
    if (s != NATS_OK) fail("link watcher", s);
    for (int attempt = 0; attempt < 1500; attempt++)
    {
        s = natsConnection_Publish(pub, linkSubject, NULL, 0);
        if (s == NATS_OK) s = natsConnection_FlushTimeout(pub, 10000);
        if (s != NATS_OK) fail("link probe", s);
        natsMsg *msg = NULL;
        s = natsSubscription_NextMsg(&msg, sub, 20);
        if (s == NATS_OK)
        {
            natsMsg_Destroy(msg);
            natsSubscription_Destroy(sub);
            natsConnection_Destroy(watcher);
            return;
        }

        if (s != NATS_TIMEOUT) fail("link watcher", s);
    }

    fprintf(stderr, "natsbench: interest made on %s did not cross the link within 30 s\n", subUrl);
    exit(3);
}

static int run_pubsub(const char *url, const char *subUrl, const char *subject, int payload, int64_t count, int publishers, int subscribers)
{
    receiver *receivers = calloc(subscribers > 0 ? subscribers : 1, sizeof(receiver));
    natsConnection **subConns = calloc(subscribers > 0 ? subscribers : 1, sizeof(natsConnection *));
    natsSubscription **subs = calloc(subscribers > 0 ? subscribers : 1, sizeof(natsSubscription *));
    for (int i = 0; i < subscribers; i++)
    {
        receiver *r = &receivers[i];
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->done, NULL);
        r->expected = count;
        r->payload = payload;
        subConns[i] = connect_to(subUrl, "c-sub", false);
        natsStatus s = natsConnection_Subscribe(&subs[i], subConns[i], subject, on_message, r);
        if (s == NATS_OK) s = natsSubscription_SetPendingLimits(subs[i], -1, -1);
        if (s == NATS_OK) s = natsConnection_FlushTimeout(subConns[i], 10000);
        if (s != NATS_OK) fail("subscribe", s);
    }

    char *data = calloc(payload > 0 ? payload : 1, 1);
    worker *workers = calloc(publishers, sizeof(worker));
    pthread_t *threads = calloc(publishers, sizeof(pthread_t));
    for (int i = 0; i < publishers; i++)
    {
        workers[i].nc = connect_to(url, "c-pub", false);
        workers[i].subject = subject;
        workers[i].data = data;
        workers[i].payload = payload;
        workers[i].count = count / publishers + (i < count % publishers ? 1 : 0);
    }

    if (subscribers > 0 && publishers > 0 && strcmp(subUrl, url) != 0) wait_for_link(subUrl, workers[0].nc, subject);

    int64_t start = now_ns();
    for (int i = 0; i < publishers; i++) pthread_create(&threads[i], NULL, publish_all, &workers[i]);
    int64_t end = start;
    for (int i = 0; i < publishers; i++)
    {
        pthread_join(threads[i], NULL);
        if (subscribers == 0 && workers[i].finished_at > end) end = workers[i].finished_at;
    }

    for (int i = 0; i < subscribers; i++)
    {
        receiver *r = &receivers[i];
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 120;
        pthread_mutex_lock(&r->lock);
        while (r->finished_at == 0)
        {
            if (pthread_cond_timedwait(&r->done, &r->lock, &deadline) != 0) break;
        }

        pthread_mutex_unlock(&r->lock);
        if (r->finished_at == 0)
        {
            fprintf(stderr, "natsbench: subscriber %d received %lld of %lld messages\n", i, (long long)r->received, (long long)count);
            return 3;
        }

        if (r->bad)
        {
            fprintf(stderr, "natsbench: subscriber %d received a message of the wrong size\n", i);
            return 3;
        }

        if (r->finished_at > end) end = r->finished_at;
    }

    int64_t units = subscribers == 0 ? count : count * subscribers;
    printf("%lld %lld 0 0\n", (long long)units, (long long)(end - start));
    for (int i = 0; i < subscribers; i++)
    {
        natsSubscription_Destroy(subs[i]);
        natsConnection_Destroy(subConns[i]);
    }

    for (int i = 0; i < publishers; i++) natsConnection_Destroy(workers[i].nc);
    return 0;
}

static void on_request(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    const char *reply = natsMsg_GetReply(msg);
    if (reply != NULL) natsConnection_Publish(nc, reply, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    natsMsg_Destroy(msg);
}

static void *request_all(void *arg)
{
    worker *w = arg;
    for (int64_t i = 0; i < w->count; i++)
    {
        natsMsg *reply = NULL;
        int64_t sent = now_ns();
        natsStatus s = natsConnection_Request(&reply, w->nc, w->subject, w->data, w->payload, 10000);
        if (s != NATS_OK) fail("request", s);
        w->latencies[i] = now_ns() - sent;
        if (natsMsg_GetDataLength(reply) != w->payload)
        {
            fprintf(stderr, "natsbench: a reply of %d bytes, %d expected\n", natsMsg_GetDataLength(reply), w->payload);
            exit(3);
        }

        natsMsg_Destroy(reply);
    }

    return NULL;
}

static int compare_ns(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_reqrep(const char *url, const char *subject, int payload, int64_t count, int clients, int services, int queue)
{
    natsConnection **serviceConns = calloc(services, sizeof(natsConnection *));
    natsSubscription **subs = calloc(services, sizeof(natsSubscription *));
    for (int i = 0; i < services; i++)
    {
        serviceConns[i] = connect_to(url, "c-svc", true);
        natsStatus s = queue
            ? natsConnection_QueueSubscribe(&subs[i], serviceConns[i], subject, "workers", on_request, NULL)
            : natsConnection_Subscribe(&subs[i], serviceConns[i], subject, on_request, NULL);
        if (s == NATS_OK) s = natsSubscription_SetPendingLimits(subs[i], -1, -1);
        if (s == NATS_OK) s = natsConnection_FlushTimeout(serviceConns[i], 10000);
        if (s != NATS_OK) fail("service subscribe", s);
    }

    char *data = calloc(payload > 0 ? payload : 1, 1);
    worker *workers = calloc(clients, sizeof(worker));
    pthread_t *threads = calloc(clients, sizeof(pthread_t));
    int64_t *latencies = calloc((size_t)(count * clients), sizeof(int64_t));
    for (int i = 0; i < clients; i++)
    {
        workers[i].nc = connect_to(url, "c-req", true);
        workers[i].subject = subject;
        workers[i].data = data;
        workers[i].payload = payload;
        workers[i].count = count;
        workers[i].latencies = latencies + (size_t)i * count;
    }

    int64_t start = now_ns();
    for (int i = 0; i < clients; i++) pthread_create(&threads[i], NULL, request_all, &workers[i]);
    for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
    int64_t end = now_ns();
    int64_t total = count * clients;
    qsort(latencies, (size_t)total, sizeof(int64_t), compare_ns);
    int64_t p50 = latencies[(total * 50 + 99) / 100 - 1];
    int64_t p99 = latencies[(total * 99 + 99) / 100 - 1];
    printf("%lld %lld %.1f %.1f\n", (long long)total, (long long)(end - start), p50 / 1000.0, p99 / 1000.0);
    for (int i = 0; i < clients; i++) natsConnection_Destroy(workers[i].nc);
    for (int i = 0; i < services; i++)
    {
        natsSubscription_Destroy(subs[i]);
        natsConnection_Destroy(serviceConns[i]);
    }

    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 8)
    {
        fprintf(stderr, "usage: natsbench pubsub URL SUBJECT PAYLOAD COUNT PUBLISHERS SUBSCRIBERS [SUBSCRIBER_URL]\n"
                        "       natsbench reqrep URL SUBJECT PAYLOAD COUNT CLIENTS SERVICES QUEUE\n");
        return 1;
    }

    int payload = atoi(argv[4]);
    int64_t count = atoll(argv[5]);
    int rc;
    if (strcmp(argv[1], "pubsub") == 0)
        rc = run_pubsub(argv[2], argc >= 9 ? argv[8] : argv[2], argv[3], payload, count, atoi(argv[6]), atoi(argv[7]));
    else if (strcmp(argv[1], "reqrep") == 0 && argc >= 9)
        rc = run_reqrep(argv[2], argv[3], payload, count, atoi(argv[6]), atoi(argv[7]), atoi(argv[8]));
    else
    {
        fprintf(stderr, "natsbench: unknown mode %s\n", argv[1]);
        return 1;
    }

    fflush(stdout);
    // Exit without nats_Close: its wait for every library thread adds nothing to the figures.
    _exit(rc);
}
