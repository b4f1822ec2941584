using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using Monitored = Broker.Monitoring.Tests.AccountMonitoringTests.Monitored;

namespace Broker.Monitoring.Tests;

/// <summary>
/// /accountz with service exports and imports, the same on our broker and nats-server 2.9.10: the exporter's service
/// exports (with <c>response_type</c>) and the system account's, every account's imports with the three system imports,
/// a route back in the exporter's <c>responses</c> while a request waits, and the subscriptions each adds.
/// </summary>
public sealed class ServiceAccountzTests
{
    private const string Config = """
        accounts {
          E: { users: [{user: e, password: e}], exports: [ {service: "svc.>", response_type: stream, accounts: [I]}, {service: "one"} ] }
          I: { users: [{user: i, password: i}], imports: [ {service: {account: E, subject: "svc.>"}}, {service: {account: E, subject: "one"}, to: "mine", share: true} ] }
        }
        """;

    private static void Configure(Broker.Core.BrokerOptions options) => options.Accounts =
    [
        new AccountOptions
        {
            Name = "E",
            Users = [new UserOptions { User = "e", Password = "e" }],
            Exports = new AccountExportOptions
            {
                Services =
                [
                    new ServiceExportOptions { Subject = "svc.>", ResponseType = ServiceResponseType.Streamed, Accounts = ["I"] },
                    new ServiceExportOptions { Subject = "one" },
                ],
            },
        },
        new AccountOptions
        {
            Name = "I",
            Users = [new UserOptions { User = "i", Password = "i" }],
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "E", Subject = "svc.>" },
                    new ServiceImportOptions { Account = "E", Subject = "one", To = "mine", Share = true },
                ],
            },
        },
    ];

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accountz_shows_service_exports_imports_and_the_routes_back(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind, Config, Configure);

        var exporter = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"one","type":"service","response_type":"Singleton"}""",
                """{"subject":"svc.\u003E","type":"service","response_type":"Streamed","approved_accounts":["I"]}""",
            ],
            Entries(exporter.GetProperty("exports")));
        Assert.Equal(3, exporter.GetProperty("subscriptions").GetInt32());
        Assert.False(exporter.TryGetProperty("responses", out _));

        var importer = (await server.GetJsonAsync("/accountz?acc=I")).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"$SYS.REQ.ACCOUNT.PING.CONNZ","account":"$SYS","to":"$SYS.REQ.ACCOUNT.I.CONNZ","type":"service","invalid":false,"share":false,"tracking":false}""",
                """{"subject":"$SYS.REQ.ACCOUNT.PING.STATZ","account":"$SYS","to":"$SYS.REQ.ACCOUNT.I.STATZ","type":"service","invalid":false,"share":false,"tracking":false}""",
                """{"subject":"$SYS.REQ.SERVER.PING.CONNZ","account":"$SYS","to":"$SYS.REQ.ACCOUNT.I.CONNZ","type":"service","invalid":false,"share":false,"tracking":false}""",
                """{"subject":"mine","account":"E","to":"one","type":"service","invalid":false,"share":true,"tracking":false}""",
                """{"subject":"svc.\u003E","account":"E","to":"svc.\u003E","type":"service","invalid":false,"share":false,"tracking":false}""",
            ],
            Entries(importer.GetProperty("imports")));
        Assert.Equal(5, importer.GetProperty("subscriptions").GetInt32());

        var system = (await server.GetJsonAsync("/accountz?acc=" + Uri.EscapeDataString("$SYS"))).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"$SYS.DEBUG.SUBSCRIBERS","type":"service","response_type":"Singleton"}""",
                """{"subject":"$SYS.REQ.ACCOUNT.*.CONNZ","type":"service","response_type":"Streamed"}""",
                """{"subject":"$SYS.REQ.ACCOUNT.*.STATZ","type":"service","response_type":"Streamed"}""",
            ],
            Entries(system.GetProperty("exports")).Where(e => !e.Contains("$JS.API", StringComparison.Ordinal)));

        // A request waiting for its (streamed) responses: one route back in the exporter, which now also subscribes
        // its response prefix.
        await using var responder = await NatsClients.ConnectAsync(server.Url, "e", o => o with { AuthOpts = new NatsAuthOpts { Username = "e", Password = "e" } });
        await using var requests = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        await using var requester = await NatsClients.ConnectAsync(server.Url, "i", o => o with { AuthOpts = new NatsAuthOpts { Username = "i", Password = "i" } });
        await using var inbox = await requester.SubscribeCoreAsync<string>("_INBOX.waiting");
        await requester.PingAsync();
        var before = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail").GetProperty("subscriptions").GetInt32();
        await requester.PublishAsync("svc.q", "hi", replyTo: "_INBOX.waiting");
        var request = await requests.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout);
        Assert.StartsWith("_R_.", request.ReplyTo, StringComparison.Ordinal);

        exporter = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail");
        Assert.Equal(before + 1, exporter.GetProperty("subscriptions").GetInt32());
        var route = Assert.Single(exporter.GetProperty("responses").EnumerateObject());
        Assert.Equal(request.ReplyTo, route.Name);
        Assert.Equal(
            $$"""{"subject":"{{request.ReplyTo}}","account":"I","to":"_INBOX.waiting","type":2,"invalid":false,"share":false,"tracking":false}""",
            JsonSerializer.Serialize(route.Value));
    }

    internal static string[] Entries(JsonElement array) => [.. array.EnumerateArray().Select(e => JsonSerializer.Serialize(e)).Order(StringComparer.Ordinal)];
}
