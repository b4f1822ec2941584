using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Security.Tests;

/// <summary>
/// Service latency tracking through NATS.Client.Core on both servers: a subscriber of the exporter's results subject
/// gets nats-server's <c>ServiceLatency</c> message (its keys, in its order, and sane durations) for a request answered
/// through an import (200, the reply marked <c>.T</c>), for one without a reply (400), one nobody takes (503), one not
/// answered within the export's response threshold (504), and with
/// <c>sampling: headers</c> only for a request whose <c>traceparent</c> asks for it (its header in the message).
/// </summary>
public sealed class ServiceLatencyTests
{
    private const string Conf = """
        accounts {
          E: {
            users: [{user: e, password: e}]
            exports: [ {service: "svc.>", latency: "lat.svc"}, {service: "hdr.>", latency: {sampling: headers, subject: "lat.hdr"}}, {service: "slow", response_threshold: "200ms", latency: "lat.slow"} ]
          }
          I: { users: [{user: i, password: i}], imports: [ {service: {account: E, subject: "svc.>"}}, {service: {account: E, subject: "hdr.>"}}, {service: {account: E, subject: "slow"}} ] }
        }
        """;

    private static readonly string[] TopKeys = ["type", "id", "timestamp", "status", "requestor", "responder", "start", "service", "system", "total"];
    private static readonly string[] FailureKeys = ["type", "id", "timestamp", "status", "description", "requestor", "start", "service", "system", "total"];
    private static readonly string[] ResponderKeys = ["start", "host", "id", "acc", "user", "name", "lang", "ver", "rtt", "server", "kind", "client_type"];

    public static TheoryData<ServerKind> Servers => ServiceImportTests.Servers;

    internal static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "E",
            Users = [AccountIsolationTests.User("e")],
            Exports = new AccountExportOptions
            {
                Services =
                [
                    new ServiceExportOptions { Subject = "svc.>", Latency = new ServiceLatencyOptions { Subject = "lat.svc" } },
                    new ServiceExportOptions { Subject = "hdr.>", Latency = new ServiceLatencyOptions { Subject = "lat.hdr", Sampling = ServiceLatencyOptions.HeadersOnly } },
                    new ServiceExportOptions { Subject = "slow", ResponseThreshold = TimeSpan.FromMilliseconds(200), Latency = new ServiceLatencyOptions { Subject = "lat.slow" } },
                ],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "I",
            Users = [AccountIsolationTests.User("i")],
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "E", Subject = "svc.>" },
                    new ServiceImportOptions { Account = "E", Subject = "hdr.>" },
                    new ServiceImportOptions { Account = "E", Subject = "slow" },
                ],
            },
        });
    }

    internal static Task<ServerUnderTest> StartAsync(ServerKind kind) => ServerUnderTest.StartAsync(kind, Accounts, Conf);

    internal static Task<NatsConnection> ConnectAsync(ServerUnderTest server, string user) =>
        NatsClients.ConnectAsync(server.Url, user, o => o.WithUser(user, user));

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task An_answered_request_publishes_its_latency_in_the_exporter(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var exporter = await ConnectAsync(server, "e");
        await using var requester = await ConnectAsync(server, "i");
        await using var results = await exporter.SubscribeCoreAsync<string>("lat.svc");
        await using var requests = await exporter.SubscribeCoreAsync<string>("svc.>");
        await exporter.PingAsync();
        var answering = Task.Run(async () =>
        {
            var request = await requests.Msgs.ReadAsync();
            await Task.Delay(50);
            await request.ReplyAsync("done");
            return request.ReplyTo!;
        });

        var reply = await requester.RequestAsync<string, string>("svc.q", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        Assert.Equal("done", reply.Data);

        // A sampled request's reply names the server: _R_.<prefix>.<id>.<server hash>.T
        var replyTo = (await answering.WaitAsync(NatsClients.Timeout)).Split('.');
        Assert.Equal(["_R_", "T"], [replyTo[0], replyTo[^1]]);
        Assert.Equal([6, 6, 8], replyTo[1..^1].Select(t => t.Length));

        var sample = await NextAsync(results);
        Assert.Equal(TopKeys, Keys(sample));
        Assert.Equal("io.nats.server.metric.v1.service_latency", sample.GetProperty("type").GetString());
        Assert.Equal(200, sample.GetProperty("status").GetInt32());
        Assert.Equal("I", sample.GetProperty("requestor").GetProperty("acc").GetString());
        var responder = sample.GetProperty("responder");
        Assert.Equal(ResponderKeys, Keys(responder));
        Assert.Equal("E", responder.GetProperty("acc").GetString());
        Assert.Equal("e", responder.GetProperty("user").GetString());
        Assert.Equal("Client", responder.GetProperty("kind").GetString());
        Assert.Equal("nats", responder.GetProperty("client_type").GetString());

        var service = sample.GetProperty("service").GetInt64();
        var total = sample.GetProperty("total").GetInt64();
        // As nats-server: service is the time the responder took less its round trip, so the two cover the 50 ms it waited
        // (a round trip measured on a loaded machine can be tens of milliseconds).
        var responderRtt = responder.GetProperty("rtt").GetInt64();
        Assert.InRange(service + responderRtt, TimeSpan.FromMilliseconds(40).Ticks * 100, TimeSpan.FromSeconds(10).Ticks * 100);
        Assert.InRange(service, 0, TimeSpan.FromSeconds(10).Ticks * 100);
        Assert.True(total >= service, $"total {total} < service {service}");
        Assert.InRange(sample.GetProperty("system").GetInt64(), 0, TimeSpan.FromSeconds(1).Ticks * 100);
        var start = sample.GetProperty("start").GetDateTime();
        Assert.InRange(start, DateTime.UtcNow.AddMinutes(-1), DateTime.UtcNow);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_without_reply_is_400_and_one_nobody_takes_is_503(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var exporter = await ConnectAsync(server, "e");
        await using var requester = await ConnectAsync(server, "i");
        await using var results = await exporter.SubscribeCoreAsync<string>("lat.svc");
        await exporter.PingAsync();

        await requester.PublishAsync("svc.noreply", "x");
        var bad = await NextAsync(results);
        Assert.Equal(FailureKeys, Keys(bad));
        Assert.Equal(400, bad.GetProperty("status").GetInt32());
        Assert.Equal("Bad Request", bad.GetProperty("description").GetString());
        Assert.Equal("I", bad.GetProperty("requestor").GetProperty("acc").GetString());
        Assert.Equal(0, bad.GetProperty("total").GetInt64());

        await requester.PublishAsync("svc.nobody", "x", replyTo: "_INBOX.nobody");
        var unavailable = await NextAsync(results);
        Assert.Equal(FailureKeys, Keys(unavailable));
        Assert.Equal(503, unavailable.GetProperty("status").GetInt32());
        Assert.Equal("Service Unavailable", unavailable.GetProperty("description").GetString());
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_not_answered_within_the_response_threshold_is_504(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var exporter = await ConnectAsync(server, "e");
        await using var requester = await ConnectAsync(server, "i");
        await using var results = await exporter.SubscribeCoreAsync<string>("lat.slow");
        await using var requests = await exporter.SubscribeCoreAsync<string>("slow");
        await using var inbox = await requester.SubscribeCoreAsync<string>("_INBOX.slow");
        await exporter.PingAsync();
        await requester.PingAsync();

        await requester.PublishAsync("slow", "x", replyTo: "_INBOX.slow");
        await requests.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout);

        var timeout = await NextAsync(results);
        Assert.Equal(FailureKeys, Keys(timeout));
        Assert.Equal(504, timeout.GetProperty("status").GetInt32());
        Assert.Equal("Service Timeout", timeout.GetProperty("description").GetString());
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Header_sampling_takes_only_requests_whose_trace_headers_ask(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var exporter = await ConnectAsync(server, "e");
        await using var requester = await ConnectAsync(server, "i");
        await using var results = await exporter.SubscribeCoreAsync<string>("lat.hdr");
        await using var requests = await exporter.SubscribeCoreAsync<string>("hdr.>");
        await exporter.PingAsync();
        var answering = Task.Run(async () =>
        {
            await foreach (var request in requests.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync("done");
            }
        });

        const string sampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        var cases = new (string Subject, NatsHeaders? Headers)[]
        {
            ("hdr.plain", null),
            ("hdr.unsampled", new NatsHeaders { ["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }),
            ("hdr.b3-denied", new NatsHeaders { ["X-B3-Sampled"] = "0", ["X-B3-TraceId"] = "80f198ee56343ba864fe8b2a57d3eff7" }),
            ("hdr.sampled", new NatsHeaders { ["traceparent"] = sampled, ["tracestate"] = "k=v", ["X-Other"] = "1" }),
        };
        foreach (var (subject, headers) in cases)
        {
            var reply = await requester.RequestAsync<string, string>(subject, "hi", headers, replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
            Assert.Equal("done", reply.Data);
        }

        // Only the last request was sampled: the first sample is its, with the headers that asked for it.
        var sample = await NextAsync(results);
        Assert.Equal(["type", "id", "timestamp", "status", "requestor", "responder", "header", "start", "service", "system", "total"], Keys(sample));
        Assert.Equal($$"""{"Traceparent":["{{sampled}}"],"Tracestate":["k=v"]}""", sample.GetProperty("header").GetRawText());
        await requests.UnsubscribeAsync();
        await answering.WaitAsync(NatsClients.Timeout);
    }

    internal static async Task<JsonElement> NextAsync(INatsSub<string> results)
    {
        var message = await results.Msgs.ReadAsync().AsTask().WaitAsync(NatsClients.Timeout);
        return JsonDocument.Parse(message.Data!).RootElement.Clone();
    }

    internal static string[] Keys(JsonElement element) => [.. element.EnumerateObject().Select(p => p.Name)];
}
