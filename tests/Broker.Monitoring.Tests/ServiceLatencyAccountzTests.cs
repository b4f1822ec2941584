using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using Monitored = Broker.Monitoring.Tests.AccountMonitoringTests.Monitored;

namespace Broker.Monitoring.Tests;

/// <summary>
/// A tracked service export in /accountz and the routes back as the requester's interest goes, the same on our broker
/// and nats-server 2.9.10: the export's <c>service_latency</c> (a rate, or <c>headers</c>), the import's
/// <c>latency</c>, a waiting sampled request's route with <c>tracking: true</c>; when the requester unsubscribes its
/// reply (or disconnects) the route goes at once (nats-server's <c>checkForReverseEntries</c>) and a sampled request
/// reports 408 on the results subject.
/// </summary>
public sealed class ServiceLatencyAccountzTests
{
    private const string Config = """
        accounts {
          E: { users: [{user: e, password: e}], exports: [ {service: "svc.>", latency: {sampling: 100, subject: "lat.svc"}}, {service: "hdr", latency: {sampling: headers, subject: "lat.hdr"}}, {service: "plain.>"} ] }
          I: { users: [{user: i, password: i}], imports: [ {service: {account: E, subject: "svc.>"}}, {service: {account: E, subject: "hdr"}}, {service: {account: E, subject: "plain.>"}} ] }
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
                    new ServiceExportOptions { Subject = "svc.>", Latency = new ServiceLatencyOptions { Subject = "lat.svc", Sampling = 100 } },
                    new ServiceExportOptions { Subject = "hdr", Latency = new ServiceLatencyOptions { Subject = "lat.hdr", Sampling = ServiceLatencyOptions.HeadersOnly } },
                    new ServiceExportOptions { Subject = "plain.>" },
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
                    new ServiceImportOptions { Account = "E", Subject = "hdr" },
                    new ServiceImportOptions { Account = "E", Subject = "plain.>" },
                ],
            },
        },
    ];

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accountz_shows_the_latency_of_exports_imports_and_a_waiting_sampled_request(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind, Config, Configure);

        var exporter = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"hdr","type":"service","response_type":"Singleton","service_latency":{"sampling":"headers","results":"lat.hdr"}}""",
                """{"subject":"plain.\u003E","type":"service","response_type":"Singleton"}""",
                """{"subject":"svc.\u003E","type":"service","response_type":"Singleton","service_latency":{"sampling":100,"results":"lat.svc"}}""",
            ],
            ServiceAccountzTests.Entries(exporter.GetProperty("exports")));
        var importer = (await server.GetJsonAsync("/accountz?acc=I")).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"hdr","account":"E","to":"hdr","type":"service","invalid":false,"share":false,"tracking":false,"latency":{"sampling":"headers","results":"lat.hdr"}}""",
                """{"subject":"plain.\u003E","account":"E","to":"plain.\u003E","type":"service","invalid":false,"share":false,"tracking":false}""",
                """{"subject":"svc.\u003E","account":"E","to":"svc.\u003E","type":"service","invalid":false,"share":false,"tracking":false,"latency":{"sampling":100,"results":"lat.svc"}}""",
            ],
            ServiceAccountzTests.Entries(importer.GetProperty("imports")).Where(e => !e.Contains("$SYS", StringComparison.Ordinal)));

        await using var responder = await Connect(server, "e");
        await using var results = await responder.SubscribeCoreAsync<string>("lat.svc");
        await using var requests = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        await using var requester = await Connect(server, "i");
        await using var inbox = await requester.SubscribeCoreAsync<string>("_INBOX.waiting");
        await requester.PingAsync();
        await requester.PublishAsync("svc.q", "hi", replyTo: "_INBOX.waiting");
        var request = await requests.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout);

        var route = Assert.Single((await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail").GetProperty("responses").EnumerateObject());
        Assert.Equal(request.ReplyTo, route.Name);
        Assert.Equal(
            $$$"""{"subject":"{{{request.ReplyTo}}}","account":"I","to":"_INBOX.waiting","type":2,"invalid":false,"share":false,"tracking":true,"latency":{"sampling":100,"results":"lat.svc"}}""",
            JsonSerializer.Serialize(route.Value));

        // The requester gives up: its route goes now, and the sample says so.
        await inbox.UnsubscribeAsync();
        await requester.PingAsync();
        await WaitForNoResponsesAsync(server);
        var sample = JsonDocument.Parse((await results.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout)).Data!).RootElement;
        Assert.Equal(408, sample.GetProperty("status").GetInt32());
        Assert.Equal("Request Timeout", sample.GetProperty("description").GetString());
        Assert.Equal("I", sample.GetProperty("requestor").GetProperty("acc").GetString());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_route_goes_when_its_requester_disconnects_or_its_wildcard_inbox_goes(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind, Config, Configure);
        await using var responder = await Connect(server, "e");
        await using var requests = await responder.SubscribeCoreAsync<string>("plain.>");
        await responder.PingAsync();

        // A wildcard inbox covering two waiting requests; a second subscription keeps one reply wanted.
        await using var requester = await Connect(server, "i");
        var inbox = await requester.SubscribeCoreAsync<string>("_INBOX.mux.*");
        await using var kept = await requester.SubscribeCoreAsync<string>("_INBOX.mux.2");
        await requester.PingAsync();
        await requester.PublishAsync("plain.a", "x", replyTo: "_INBOX.mux.1");
        await requester.PublishAsync("plain.b", "x", replyTo: "_INBOX.mux.2");
        for (var i = 0; i < 2; i++)
        {
            await requests.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout);
        }

        Assert.Equal(2, await ResponsesAsync(server));
        await inbox.UnsubscribeAsync();
        await requester.PingAsync();
        var left = Assert.Single((await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail").GetProperty("responses").EnumerateObject());
        Assert.Equal("_INBOX.mux.2", left.Value.GetProperty("to").GetString());

        // The requester closes: the last route goes.
        await requester.DisposeAsync();
        await WaitForNoResponsesAsync(server);
    }

    private static Task<NatsConnection> Connect(Monitored server, string user) =>
        NatsClients.ConnectAsync(server.Url, user, o => o with { AuthOpts = new NatsAuthOpts { Username = user, Password = user } });

    private static async Task<int> ResponsesAsync(Monitored server)
    {
        var detail = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail");
        return detail.TryGetProperty("responses", out var responses) ? responses.EnumerateObject().Count() : 0;
    }

    private static async Task WaitForNoResponsesAsync(Monitored server)
    {
        var deadline = DateTime.UtcNow + NatsClients.Timeout;
        while (await ResponsesAsync(server) > 0)
        {
            Assert.True(DateTime.UtcNow < deadline, "the route back is still there");
            await Task.Delay(20);
        }
    }
}
