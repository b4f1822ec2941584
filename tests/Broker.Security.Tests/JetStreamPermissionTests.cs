using System.Text.Json;
using Broker.JetStream;
using Broker.Storage.MemStore;
using static Broker.Security.Tests.WireScript;

namespace Broker.Security.Tests;

/// <summary>
/// JetStream through permissions: API calls outside the allow list, KV and object-store buckets of other users, and
/// push consumers whose deliver subject the user may not use. Run against our broker (JetStream, memory store) and
/// nats-server 2.9.10 with <c>-js</c>, with the same users. JSON replies are reduced to their type or error code and
/// MSG lines to subject and sid, so times, sizes and generated names do not matter.
/// </summary>
public sealed class JetStreamPermissionTests
{
    private const string Inbox = "_INBOX.u";

    private static readonly SecurityUser KvA = new(
        "kva",
        PubAllow: ["$KV.a.>", "$JS.API.STREAM.INFO.KV_a", "$JS.API.DIRECT.GET.KV_a.>", "$JS.API.STREAM.MSG.GET.KV_a", "$O.a.>"],
        SubAllow: ["_INBOX.>", "$KV.a.>"]);

    private static readonly SecurityUser ConsumerOnly = new(
        "jsc",
        PubAllow: ["$JS.API.CONSUMER.CREATE.ORDERS", "$JS.API.CONSUMER.CREATE.ORDERS.>", "$JS.API.CONSUMER.DURABLE.CREATE.ORDERS.>"],
        SubAllow: ["_INBOX.>"]);

    // Streams every case starts with, created by the observer: two KV buckets, an object store bucket and ORDERS.
    private static readonly string[] Setup =
    [
        "o|SUB _INBOX.o 1",
        "o2|" + Pub("$JS.API.STREAM.CREATE.KV_a", """{"name":"KV_a","subjects":["$KV.a.>"],"storage":"memory","max_msgs_per_subject":1,"allow_direct":true}""", "_INBOX.o"),
        "o2|" + Pub("$JS.API.STREAM.CREATE.KV_b", """{"name":"KV_b","subjects":["$KV.b.>"],"storage":"memory","max_msgs_per_subject":1,"allow_direct":true}""", "_INBOX.o"),
        "o2|" + Pub("$JS.API.STREAM.CREATE.OBJ_b", """{"name":"OBJ_b","subjects":["$O.b.C.>","$O.b.M.>"],"storage":"memory","allow_rollup_hdrs":true}""", "_INBOX.o"),
        "o2|" + Pub("$JS.API.STREAM.CREATE.ORDERS", """{"name":"ORDERS","subjects":["orders.>"],"storage":"memory"}""", "_INBOX.o"),
        "o2|" + Pub("$KV.a.k", "value-a", "_INBOX.o"),
        "o2|" + Pub("$KV.b.k", "secret-b", "_INBOX.o"),
        "o2|" + Pub("$O.b.M.bWV0YQ==", "{}", "_INBOX.o"),
        "o2|" + Pub("orders.1", "o1", "_INBOX.o"),
    ];

    private const string SetupReplies =
        "MSG _INBOX.o 1 | stream_create_response | MSG _INBOX.o 1 | stream_create_response | MSG _INBOX.o 1 | stream_create_response | MSG _INBOX.o 1 | stream_create_response" +
        " | MSG _INBOX.o 1 | ack KV_a | MSG _INBOX.o 1 | ack KV_b | MSG _INBOX.o 1 | ack OBJ_b | MSG _INBOX.o 1 | ack ORDERS";

    private static readonly PermissionCase[] Cases =
    [
        new(
            "kv-other-bucket-by-its-subjects", KvA,
            ["u|SUB " + Inbox + " 1\n" + Pub("$JS.API.STREAM.INFO.KV_b", "", Inbox) + "\n" + Pub("$JS.API.DIRECT.GET.KV_b.$KV.b.k", "", Inbox) + "\n" +
                Pub("$JS.API.STREAM.MSG.GET.KV_b", """{"last_by_subj":"$KV.b.k"}""", Inbox) + "\nSUB $KV.b.> 2\n" + Pub("$KV.b.k", "overwrite") + "\nSUB $JS.API.DIRECT.GET.> 3"],
            string.Join(" | ", Violation.Pub("$JS.API.STREAM.INFO.KV_b"), Violation.Pub("$JS.API.DIRECT.GET.KV_b.$KV.b.k"), Violation.Pub("$JS.API.STREAM.MSG.GET.KV_b"),
                Violation.Sub("$KV.b.>"), Violation.Pub("$KV.b.k"), Violation.Sub("$JS.API.DIRECT.GET.>")),
            SetupReplies),
        new(
            "kv-other-bucket-through-its-own-stream", KvA,
            ["u|SUB " + Inbox + " 1", "u2|" + Pub("$JS.API.STREAM.MSG.GET.KV_a", """{"last_by_subj":"$KV.b.k"}""", Inbox),
                "u2|" + Pub("$JS.API.STREAM.MSG.GET.KV_a", """{"last_by_subj":"$KV.a.k"}""", Inbox)],
            "MSG _INBOX.u 1 | err 10037 | MSG _INBOX.u 1 | stream_msg_get_response",
            SetupReplies),
        new(
            "object-store-other-bucket", KvA,
            ["u|SUB $O.b.> 1\n" + Pub("$O.b.M.bWV0YQ==", "{}") + "\n" + Pub("$O.a.M.x", "{}")],
            Violation.Sub("$O.b.>") + " | " + Violation.Pub("$O.b.M.bWV0YQ=="),
            SetupReplies),
        new(
            "js-api-outside-the-allow-list", ConsumerOnly,
            ["u|" + Pub("$JS.API.STREAM.CREATE.X", """{"name":"X","subjects":["secret.>"]}""", Inbox) + "\n" + Pub("$JS.API.STREAM.DELETE.ORDERS", "", Inbox) + "\n" +
                Pub("$JS.API.CONSUMER.CREATE.KV_b", """{"stream_name":"KV_b","config":{"name":"C","ack_policy":"none"}}""", Inbox) + "\n" + Pub("$JS.API.STREAM.PURGE.KV_b", "", Inbox)],
            string.Join(" | ", Violation.Pub("$JS.API.STREAM.CREATE.X"), Violation.Pub("$JS.API.STREAM.DELETE.ORDERS"), Violation.Pub("$JS.API.CONSUMER.CREATE.KV_b"), Violation.Pub("$JS.API.STREAM.PURGE.KV_b")),
            SetupReplies),
        new(
            "push-consumer-delivering-to-a-subject-the-user-may-not-use", ConsumerOnly,
            ["o|SUB secret.orders 2", "u|SUB secret.orders 2", "u2|SUB " + Inbox + " 1\n" +
                Pub("$JS.API.CONSUMER.CREATE.ORDERS", """{"stream_name":"ORDERS","config":{"name":"SNOOP","deliver_subject":"secret.orders","ack_policy":"none"}}""", Inbox),
                "wait|300"],
            Violation.Sub("secret.orders") + " | MSG _INBOX.u 1 | consumer_create_response",
            SetupReplies + " | MSG orders.1 2 | o1",
            Note: "as nats-server: JetStream acts for the account, so a user who may create consumers on a stream may point a push consumer's deliver subject anywhere in the account; keep $JS.API.CONSUMER.CREATE.<stream> for trusted users"),
        new(
            "push-consumer-delivering-into-the-js-api", ConsumerOnly,
            ["u2|SUB " + Inbox + " 1\n" +
                Pub("$JS.API.CONSUMER.CREATE.ORDERS", """{"stream_name":"ORDERS","config":{"name":"API","deliver_subject":"$JS.API.STREAM.DELETE.ORDERS","ack_policy":"none"}}""", Inbox),
                "wait|300", "o2|" + Pub("$JS.API.STREAM.NAMES", "", "_INBOX.o")],
            "MSG _INBOX.u 1 | consumer_create_response",
            SetupReplies + " | MSG _INBOX.o 1 | names KV_a,KV_b,OBJ_b,ORDERS"),
    ];

    public static TheoryData<string, ServerKind> Rows() => PermissionCase.OnBothServers(Cases);

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Rows))]
    public async Task JetStream_bypass_attempt_is_refused_as_nats_server_refuses_it(string name, ServerKind kind)
    {
        var row = Cases.Single(c => c.Name == name);
        SecurityUser[] users = [SecurityUsers.Admin, row.User];
        await using var server = await JetStreamSecurityServer.StartAsync(kind, o => SecurityUsers.Apply(o, users), SecurityUsers.Conf(users));

        var (user, observer) = await RunAsync(server.EndPoint, row.User, [.. Setup, .. row.Steps], Normalize);

        Assert.Equal(row.UserFor(kind), user);
        Assert.Equal(row.ObserverFor(kind), observer);
    }

    /// <summary>MSG lines to subject and sid; JSON to its type, error code, publish-ack stream or sorted stream names.</summary>
    private static string Normalize(string line)
    {
        if (line.StartsWith("MSG ", StringComparison.Ordinal))
        {
            return string.Join(' ', line.Split(' ').Take(3));
        }

        if (!line.StartsWith('{'))
        {
            return line;
        }

        using var json = JsonDocument.Parse(line);
        var root = json.RootElement;
        if (root.TryGetProperty("error", out var error))
        {
            return "err " + error.GetProperty("err_code").GetInt32();
        }

        if (root.TryGetProperty("streams", out var streams) && streams.ValueKind == JsonValueKind.Array)
        {
            return "names " + string.Join(',', streams.EnumerateArray().Select(s => s.GetString()).Order(StringComparer.Ordinal));
        }

        if (root.TryGetProperty("stream", out var stream) && stream.ValueKind == JsonValueKind.String)
        {
            return "ack " + stream.GetString();
        }

        return root.TryGetProperty("type", out var type) ? type.GetString()!.Split('.')[^1] : line;
    }
}
