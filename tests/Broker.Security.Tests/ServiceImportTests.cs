using System.Text.Json;
using System.Text.RegularExpressions;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;

namespace Broker.Security.Tests;

/// <summary>
/// Service exports and imports as raw-socket transcripts, the same on our broker and nats-server 2.9.10 (same accounts on
/// both): the responder in the exporter gets the request under the exporter's subject with a <c>_R_.xxxxxx.yyyyyy</c>
/// reply and a <c>Nats-Request-Info</c> header (HMSG; MSG without it for a responder without headers), its responses
/// reach the requester's inbox (one for a singleton export, several until an empty message for a streamed one), a
/// request nobody answers gets no reply at all, and the importer's publish permissions apply to the import's subject.
/// </summary>
public sealed partial class ServiceImportTests
{
    internal const string Conf = """
        accounts {
          A: {
            users: [{user: a, password: a}]
            exports: [ {service: "svc.>"}, {service: "one"}, {service: "str", response_type: stream, accounts: [B]}, {service: "chk", response_type: chunked} ]
          }
          B: {
            users: [{user: b, password: b}, {user: bp, password: bp, permissions: { publish: { deny: "svc.secret" } } }]
            imports: [
              {service: {account: A, subject: "svc.>"}}
              {service: {account: A, subject: "one"}, to: "myone", share: true}
              {service: {account: A, subject: "str"}, to: "mystr"}
              {service: {account: A, subject: "chk"}}
            ]
          }
          C: { users: [{user: c, password: c}] }
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    internal static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [AccountIsolationTests.User("a")],
            Exports = new AccountExportOptions
            {
                Services =
                [
                    new ServiceExportOptions { Subject = "svc.>" },
                    new ServiceExportOptions { Subject = "one" },
                    new ServiceExportOptions { Subject = "str", ResponseType = ServiceResponseType.Streamed, Accounts = ["B"] },
                    new ServiceExportOptions { Subject = "chk", ResponseType = ServiceResponseType.Chunked },
                ],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "B",
            Users =
            [
                AccountIsolationTests.User("b"),
                new UserOptions
                {
                    User = "bp",
                    Password = "bp",
                    Permissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Deny = ["svc.secret"] } },
                },
            ],
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "A", Subject = "svc.>" },
                    new ServiceImportOptions { Account = "A", Subject = "one", To = "myone", Share = true },
                    new ServiceImportOptions { Account = "A", Subject = "str", To = "mystr" },
                    new ServiceImportOptions { Account = "A", Subject = "chk" },
                ],
            },
        });
        options.Accounts.Add(new AccountOptions { Name = "C", Users = [AccountIsolationTests.User("c")] });
    }

    [GeneratedRegex("^HMSG (?<subject>\\S+) (?<sid>\\S+) (?<reply>_R_\\.[0-9A-Za-z]{6}\\.[0-9A-Za-z]{6}) (?<hdr>\\d+) (?<total>\\d+)$")]
    private static partial Regex RequestLine();

    private static async Task<RawClient> ConnectAsync(ServerUnderTest server, string user, bool headers = true)
    {
        var client = await server.ConnectAsync();
        var flags = headers ? ",\"headers\":true,\"no_responders\":true" : string.Empty;
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false{flags}}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static async Task<IReadOnlyList<string>> SettleAsync(RawClient client) => (await client.PingAndCollectAsync()).Lines;

    /// <summary>A responder of A on <paramref name="subscribe"/> and a requester of B, both connected.</summary>
    private static async Task<(ServerUnderTest Server, RawClient Responder, RawClient Requester)> StartAsync(ServerKind kind, string subscribe, string requester = "b", bool responderHeaders = true)
    {
        var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        var responder = await ConnectAsync(server, "a", responderHeaders);
        var client = await ConnectAsync(server, requester);
        await responder.SendAsync($"SUB {subscribe} 1\r\n");
        Assert.Equal(["PONG"], await SettleAsync(responder));
        await client.SendAsync("SUB _INBOX.r 9\r\n");
        Assert.Equal(["PONG"], await SettleAsync(client));
        return (server, responder, client);
    }

    /// <summary>The request line's parts and the header's JSON, from what the responder read up to its PONG.</summary>
    private static (Match Line, JsonElement Info) ParseRequest(IReadOnlyList<string> lines)
    {
        var line = RequestLine().Match(lines[0]);
        Assert.True(line.Success, string.Join(" | ", lines));
        Assert.Equal("NATS/1.0", lines[1]);
        var header = lines.First(l => l.StartsWith("Nats-Request-Info: ", StringComparison.Ordinal));
        using var document = JsonDocument.Parse(header["Nats-Request-Info: ".Length..]);
        return (line, document.RootElement.Clone());
    }

    private static string[] Keys(JsonElement element) => [.. element.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal)];

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_reaches_the_responder_with_a_route_reply_and_the_request_info(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "svc.>");
        await using (server)
        await using (responder)
        await using (requester)
        {
            await requester.SendAsync("PUB svc.x _INBOX.r 2\r\nhi\r\n");
            Assert.Equal(["PONG"], await SettleAsync(requester));
            var lines = await SettleAsync(responder);
            var (line, info) = ParseRequest(lines);
            Assert.Equal("svc.x", line.Groups["subject"].Value);
            Assert.Equal("1", line.Groups["sid"].Value);
            Assert.Equal(["NATS/1.0", lines[2], string.Empty, "hi", "PONG"], lines.Skip(1));
            Assert.Equal(["acc", "rtt"], Keys(info));
            Assert.Equal("B", info.GetProperty("acc").GetString());
            Assert.True(info.GetProperty("rtt").GetInt64() > 0);

            // Singleton: the first response reaches the requester's inbox, the second does not.
            var reply = line.Groups["reply"].Value;
            await responder.SendAsync($"PUB {reply} 3\r\nr-1\r\nPUB {reply} 3\r\nr-2\r\n");
            Assert.Equal(["PONG"], await SettleAsync(responder));
            Assert.Equal(["MSG _INBOX.r 9 3", "r-1", "PONG"], await SettleAsync(requester));
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task The_imports_to_subject_maps_onto_the_export_and_share_passes_the_requesters_details(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "one");
        await using (server)
        await using (responder)
        await using (requester)
        {
            await requester.SendAsync("PUB myone _INBOX.r 2\r\nhi\r\n");
            Assert.Equal(["PONG"], await SettleAsync(requester));
            var (line, info) = ParseRequest(await SettleAsync(responder));
            Assert.Equal("one", line.Groups["subject"].Value);
            Assert.Equal(["acc", "client_type", "host", "id", "kind", "rtt", "server", "start", "user"], Keys(info));
            Assert.Equal("b", info.GetProperty("user").GetString());
            Assert.Equal("Client", info.GetProperty("kind").GetString());
            Assert.Equal("nats", info.GetProperty("client_type").GetString());
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_header_of_the_requester_is_kept_and_its_own_request_info_replaced(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "svc.>");
        await using (server)
        await using (responder)
        await using (requester)
        {
            const string headers = "NATS/1.0\r\nX-A: 1\r\nNats-Request-Info: forged\r\n\r\n";
            await requester.SendAsync($"HPUB svc.h _INBOX.r {headers.Length} {headers.Length + 2}\r\n{headers}hi\r\n");
            Assert.Equal(["PONG"], await SettleAsync(requester));
            var lines = await SettleAsync(responder);
            var (_, info) = ParseRequest(lines);
            Assert.Equal("X-A: 1", lines[2]);
            Assert.StartsWith("Nats-Request-Info: {", lines[3], StringComparison.Ordinal);
            Assert.Equal("B", info.GetProperty("acc").GetString());
            Assert.Equal([string.Empty, "hi", "PONG"], lines.Skip(4));
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_responder_without_headers_gets_msg_and_a_request_without_reply_no_route(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "svc.>", responderHeaders: false);
        await using (server)
        await using (responder)
        await using (requester)
        {
            await requester.SendAsync("PUB svc.x _INBOX.r 2\r\nhi\r\nPUB svc.y 2\r\nho\r\n");
            Assert.Equal(["PONG"], await SettleAsync(requester));
            var lines = await SettleAsync(responder);
            Assert.Equal(5, lines.Count);
            Assert.Matches("^MSG svc\\.x 1 _R_\\.[0-9A-Za-z]{6}\\.[0-9A-Za-z]{6} 2$", lines[0]);
            Assert.Equal(["hi", "MSG svc.y 1 2", "ho", "PONG"], lines.Skip(1));
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_streamed_export_delivers_responses_until_an_empty_message(ServerKind kind)
    {
        foreach (var (subject, exported) in new[] { ("mystr", "str"), ("chk", "chk") })
        {
            var (server, responder, requester) = await StartAsync(kind, exported);
            await using (server)
            await using (responder)
            await using (requester)
            {
                await requester.SendAsync($"PUB {subject} _INBOX.r 2\r\nhi\r\n");
                Assert.Equal(["PONG"], await SettleAsync(requester));
                var reply = ParseRequest(await SettleAsync(responder)).Line.Groups["reply"].Value;
                await responder.SendAsync($"PUB {reply} 3\r\ns-1\r\nPUB {reply} 3\r\ns-2\r\nPUB {reply} 0\r\n\r\nPUB {reply} 3\r\ns-3\r\n");
                Assert.Equal(["PONG"], await SettleAsync(responder));
                Assert.Equal(["MSG _INBOX.r 9 3", "s-1", "MSG _INBOX.r 9 3", "s-2", "MSG _INBOX.r 9 0", string.Empty, "PONG"], await SettleAsync(requester));
            }
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_nobody_answers_gets_no_reply_not_even_no_responders(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "other");
        await using (server)
        await using (responder)
        await using (requester)
        {
            await requester.SendAsync("PUB svc.x _INBOX.r 2\r\nhi\r\n");
            Assert.Equal(["PONG"], await SettleAsync(requester));
            Assert.Equal(["PONG"], await SettleAsync(responder));
            Assert.Equal(["PONG"], await SettleAsync(requester));
        }
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task The_importers_publish_permissions_apply_to_the_import_and_accounts_without_it_see_nothing(ServerKind kind)
    {
        var (server, responder, requester) = await StartAsync(kind, "svc.>", requester: "bp");
        await using (server)
        await using (responder)
        await using (requester)
        {
            await using var other = await ConnectAsync(server, "c");
            await requester.SendAsync("PUB svc.secret _INBOX.r 2\r\nhi\r\n");
            Assert.Equal(["-ERR 'Permissions Violation for Publish to \"svc.secret\"'", "PONG"], await SettleAsync(requester));
            await other.SendAsync("PUB svc.x _INBOX.r 2\r\nhi\r\n");
            Assert.Equal(["PONG"], await SettleAsync(other));
            Assert.Equal(["PONG"], await SettleAsync(responder));
        }
    }
}
