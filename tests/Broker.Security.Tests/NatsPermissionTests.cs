namespace Broker.Security.Tests;

/// <summary>
/// Permission bypass attempts over the NATS protocol, each run against our broker and nats-server 2.9.10 with the same
/// users: the same error lines, and the same messages delivered or not.
/// </summary>
public sealed class NatsPermissionTests
{
    private static readonly SecurityUser Narrow = new("narrow", PubAllow: ["a.*"], SubAllow: ["a.*"]);
    private static readonly SecurityUser Deep = new("deep", PubAllow: ["a.b.>"], SubAllow: ["a.b.>"]);
    private static readonly SecurityUser Denied = new("denied", PubAllow: ["p.>"], PubDeny: ["p.secret"], SubAllow: ["s.>"], SubDeny: ["s.secret", "s.*.hidden"]);
    private static readonly SecurityUser Queue = new("queue", PubAllow: ["q.>"], SubAllow: ["q.* workers"]);
    private static readonly SecurityUser Service = new("svc", PubAllow: ["svc.status"], SubAllow: ["svc.>"], ResponsesMax: 2, ResponsesExpire: TimeSpan.FromMilliseconds(500));
    private static readonly SecurityUser Inbox = new("inbox", PubAllow: ["svc.>"], SubAllow: ["_INBOX.inbox.>"]);
    private static readonly SecurityUser NoSystem = new("nosys", PubAllow: ["a.>"], SubAllow: ["a.>"]);

    private static readonly PermissionCase[] Cases =
    [
        // Wildcard subscriptions wider than the allow list.
        new("full-wildcard-over-a.*", Narrow, ["u|SUB > 1", "o|PUB a.x 1\nx"], Violation.Sub(">")),
        new("token-wildcard-over-a.*", Narrow, ["u|SUB * 1\nSUB *.x 2", "o|PUB a.x 1\nx"], Violation.Sub("*") + " | " + Violation.Sub("*.x")),
        new(
            "a.>-over-a.*", Narrow, ["u|SUB a.> 1", "o|PUB a.b.c 1\nx"], Violation.Sub("a.>"),
            ReferenceUser: "MSG a.b.c 1 1 | x",
            Note: "nats-server matches the subscription's wildcard tokens literally against the allow list, so a.> passes a.* and then receives a.b.c; we require the allow list to cover every subject the subscription can match"),
        new("a.*-receives-only-its-level", Narrow, ["u|SUB a.* 1", "o|PUB a.x 1\nx\nPUB a.x.y 1\ny\nPUB b 1\nz"], "MSG a.x 1 1 | x"),
        new("publish-outside-a.*", Narrow, ["u|PUB a.b.c 1\nx\nPUB b 1\nx\nPUB a.ok 1\nx"], Violation.Pub("a.b.c") + " | " + Violation.Pub("b")),
        new("a.>-over-a.b.>", Deep, ["u|SUB a.> 1\nSUB a.*.c 2\nSUB a.b.> 3", "o|PUB a.x.c 1\nx\nPUB a.b.c 1\ny"], Violation.Sub("a.>") + " | " + Violation.Sub("a.*.c") + " | MSG a.b.c 3 1 | y"),

        // Deny overrides allow, for plain and wildcard subscriptions and for publishes (PUB and HPUB).
        new("deny-literal-subscription", Denied, ["u|SUB s.secret 1"], Violation.Sub("s.secret")),
        new(
            "deny-filters-wildcard-deliveries", Denied, ["u|SUB s.* 1\nSUB s.*.* 2", "o|PUB s.secret 1\na\nPUB s.open 1\nb\nPUB s.x.hidden 1\nc\nPUB s.x.open 1\nd"],
            "MSG s.open 1 1 | b | MSG s.x.open 2 1 | d"),
        new("deny-publish", Denied, ["o|SUB p.> 1", "u|PUB p.secret 1\nx\nHPUB p.secret 12 13\nNATS/1.0\n\nx\nPUB p.open 1\ny"],
            Violation.Pub("p.secret") + " | " + Violation.Pub("p.secret"), "MSG p.open 1 1 | y"),
        new("publish-to-a-wildcard-subject", Denied, ["o|SUB p.secret 1\nSUB p.* 2", "u|PUB p.* 1\nx\nPUB p.> 1\nx"], "-ERR 'Invalid Publish Subject' | -ERR 'Invalid Publish Subject'",
            "MSG p.* 2 1 | x | MSG p.> 2 1 | x",
            Note: "both servers report the wildcard subject yet route it literally (only to subscriptions whose own wildcards match it), so p.secret receives nothing"),

        // Queue subscriptions: an allow entry with a queue admits only that queue.
        new("queue-entry-needs-its-queue", Queue, ["u|SUB q.x 1\nSUB q.x other 2\nSUB q.x workers 3", "o|PUB q.x 1\nx"],
            Violation.Sub("q.x") + " | " + Violation.Sub("q.x", "other") + " | MSG q.x 3 1 | x"),
        new(
            "queue-wildcard-wider-than-its-entry", Queue, ["u|SUB q.> workers 1", "o|PUB q.x.y 1\nx"], Violation.Sub("q.>", "workers"),
            ReferenceUser: "MSG q.x.y 1 1 | x",
            Note: "as a.>-over-a.*: nats-server matches q.> literally against q.* and then delivers q.x.y"),

        // Reply subjects and allow_responses (max 2, expires 500 ms).
        new("no-response-without-a-request", Service, ["o|SUB _INBOX.r1 1", "u|PUB _INBOX.r1 1\nx"], Violation.Pub("_INBOX.r1")),
        new(
            "allow-responses-max", Service,
            ["o|SUB _INBOX.r1 1", "u|SUB svc.req 1", "o|PUB svc.req _INBOX.r1 1\nq", "u|PUB _INBOX.r1 1\na\nPUB _INBOX.r1 1\nb\nPUB _INBOX.r1 1\nc\nPUB _INBOX.other 1\nd"],
            "MSG svc.req 1 _INBOX.r1 1 | q | " + Violation.Pub("_INBOX.r1") + " | " + Violation.Pub("_INBOX.other"),
            "MSG _INBOX.r1 1 1 | a | MSG _INBOX.r1 1 1 | b"),
        new(
            "allow-responses-expire", Service,
            ["o|SUB _INBOX.r2 1", "u|SUB svc.req 1", "o|PUB svc.req _INBOX.r2 1\nq", "wait|1200", "u|PUB _INBOX.r2 1\nl"],
            "MSG svc.req 1 _INBOX.r2 1 | q | " + Violation.Pub("_INBOX.r2")),
        new("allow-responses-keep-the-allow-list", Service, ["u|PUB svc.status 1\nx\nPUB svc.other 1\ny"], Violation.Pub("svc.other")),

        // _INBOX abuse: snooping other clients' replies.
        new(
            "inbox-snooping", Inbox, ["u|SUB _INBOX.> 1\nSUB _INBOX.* 2\nSUB _INBOX.*.> 3\nSUB _INBOX.inbox.> 4", "o|PUB _INBOX.someone.1 1\nx\nPUB _INBOX.inbox.1 1\ny"],
            Violation.Sub("_INBOX.>") + " | " + Violation.Sub("_INBOX.*") + " | " + Violation.Sub("_INBOX.*.>") + " | MSG _INBOX.inbox.1 4 1 | y"),

        // System and JetStream API subjects without permission.
        new(
            "js-api-and-sys-without-permission", NoSystem,
            ["u|PUB $JS.API.INFO _INBOX.x 0\n\nPUB $JS.API.STREAM.CREATE.X 0\n\nPUB $SYS.REQ.SERVER.PING 0\n\nSUB $SYS.> 1\nSUB $JS.API.> 2\nSUB $JS.EVENT.> 3"],
            string.Join(" | ", Violation.Pub("$JS.API.INFO"), Violation.Pub("$JS.API.STREAM.CREATE.X"), Violation.Pub("$SYS.REQ.SERVER.PING"), Violation.Sub("$SYS.>"), Violation.Sub("$JS.API.>"), Violation.Sub("$JS.EVENT.>"))),
    ];

    public static TheoryData<string, ServerKind> Rows() => PermissionCase.OnBothServers(Cases);

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Rows))]
    public async Task Bypass_attempt_is_refused_as_nats_server_refuses_it(string name, ServerKind kind)
    {
        var row = Cases.Single(c => c.Name == name);
        SecurityUser[] users = row.User == SecurityUsers.Admin ? [SecurityUsers.Admin] : [SecurityUsers.Admin, row.User];
        await using var server = await ServerUnderTest.StartAsync(kind, o => SecurityUsers.Apply(o, users), SecurityUsers.Conf(users));

        var (user, observer) = await WireScript.RunAsync(server.EndPoint, row.User, row.Steps);

        Assert.Equal(row.UserFor(kind), user);
        Assert.Equal(row.ObserverFor(kind), observer);
    }
}
