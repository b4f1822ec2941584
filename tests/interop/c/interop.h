/*
 * What the scenarios of the C interop program share (interop.c, kvcross.c): the first-failure record behind the
 * JSON summary, the CHECK/EXPECT shorthands, and a connection with the program's timeouts and no reconnects.
 */
#ifndef BROKER_INTEROP_H
#define BROKER_INTEROP_H

#include <nats/nats.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT_MS 5000

/* Records the first failure with libnats' error text; returns 0 so callers can `return fail(...)`. */
int fail(const char *what, natsStatus s);

/* Connects to `url` named `name`, with TIMEOUT_MS and without reconnecting. */
natsStatus open_connection(natsConnection **nc, const char *url, const char *name);

/* nats.c's KeyValueCrossAccount against a server configured as that test configures it (kvcross.c). */
int kvcrossaccount(const char *url_a, const char *url_i, int *checks);

#define CHECK(call, what)                  \
    do                                     \
    {                                      \
        natsStatus s_ = (call);            \
        if (s_ != NATS_OK)                 \
            return fail((what), s_);       \
    } while (0)

#define EXPECT(cond, what)                 \
    do                                     \
    {                                      \
        if (!(cond))                       \
            return fail((what), NATS_OK);  \
    } while (0)

#endif
