using System.Buffers;
using System.Text;
using Broker.Abstractions;

namespace Broker.Interop.Tests;

/// <summary>
/// Messages crossing client implementations: nats.js, libnats (C), the .NET client (NATS.Client.Core) and, on our
/// broker, the in-process bus. Each pairing runs against our broker and the reference nats-server.
/// </summary>
public sealed class CrossClientTests(CClient c) : IClassFixture<CClient>
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Js_publisher_to_dotnet_subscriber_and_one_without_header_support(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var dotnet = await NatsClients.ConnectAsync(server.Url);
        await using var sub = await dotnet.SubscribeCoreAsync<string>("cross.js-to-net");
        await dotnet.PingAsync();
        await using var headerless = await server.ConnectAsync();
        await headerless.SendAsync("CONNECT {\"verbose\":false,\"headers\":false}\r\nSUB cross.js-to-net 1\r\n");
        Assert.Equal(["PONG"], (await headerless.PingAndCollectAsync()).Lines);

        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("publish.mjs", server.Url, "cross.js-to-net", "25"));

        // nats.js sent HPUB with an X-Index header: the .NET client gets it with the payload, while a client that
        // announced no header support gets the payload alone.
        for (var i = 0; i < 25; i++)
        {
            var message = await sub.NextAsync();
            Assert.Equal($"msg-{i}", message.Data);
            Assert.Equal($"{i}", message.Headers?["X-Index"].ToString());
        }

        var lines = (await headerless.PingAndCollectAsync()).Lines;
        Assert.Equal(Enumerable.Range(0, 25).SelectMany(i => new[] { $"MSG cross.js-to-net 1 {$"msg-{i}".Length}", $"msg-{i}" }).Append("PONG"), lines);
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Dotnet_publisher_to_js_subscriber(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var js = NodeScripts.Start("subscribe.mjs", server.Url, "cross.net-to-js", "25");
        await NodeScripts.WaitReadyAsync(js);

        await using var dotnet = await NatsClients.ConnectAsync(server.Url);
        for (var i = 0; i < 25; i++)
        {
            await dotnet.PublishAsync("cross.net-to-js", $"msg-{i}");
        }

        await dotnet.PingAsync();
        var summary = ScenarioSummary.AssertOk(await js.WaitForExitAsync(NodeScripts.Timeout));
        Assert.Equal(25, summary.GetProperty("received").GetInt32());
        Assert.Equal(0, summary.GetProperty("withHeaders").GetInt32());
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Dotnet_requests_answered_by_js_responder(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var js = NodeScripts.Start("respond.mjs", server.Url, "cross.js-svc", "10");
        await NodeScripts.WaitReadyAsync(js);

        await using var dotnet = await NatsClients.ConnectAsync(server.Url);
        for (var i = 0; i < 10; i++)
        {
            var reply = await dotnet.RequestAsync<string, string>("cross.js-svc", $"hello-{i}");
            Assert.Equal($"HELLO-{i}", reply.Data);
        }

        Assert.Equal(10, ScenarioSummary.AssertOk(await js.WaitForExitAsync(NodeScripts.Timeout)).GetProperty("answered").GetInt32());
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Js_requests_answered_by_dotnet_responder(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var dotnet = await NatsClients.ConnectAsync(server.Url, "net-responder");
        await using var service = await UpperCaseResponderAsync(dotnet, "cross.net-svc");

        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("request.mjs", server.Url, "cross.net-svc", "10"));
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task C_requests_answered_by_js_responder(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var js = NodeScripts.Start("respond.mjs", server.Url, "cross.js-svc", "5");
        await NodeScripts.WaitReadyAsync(js);

        ScenarioSummary.AssertOk(await c.RunAsync("request", server.Url, "cross.js-svc", "5"));
        ScenarioSummary.AssertOk(await js.WaitForExitAsync(NodeScripts.Timeout));
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Js_requests_answered_by_c_responder(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var responder = c.Start("respond", server.Url, "cross.c-svc", "5");
        await responder.WaitForLineAsync(line => line == ScenarioSummary.ReadyLine, CClient.Timeout);

        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("request.mjs", server.Url, "cross.c-svc", "5"));
        ScenarioSummary.AssertOk(await responder.WaitForExitAsync(CClient.Timeout));
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task C_requests_answered_by_dotnet_responder(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var dotnet = await NatsClients.ConnectAsync(server.Url, "net-responder");
        await using var service = await UpperCaseResponderAsync(dotnet, "cross.net-svc");

        ScenarioSummary.AssertOk(await c.RunAsync("request", server.Url, "cross.net-svc", "5"));
    }

    [Fact(Timeout = 90_000)]
    public async Task Js_requests_answered_by_bus_responder_with_headers()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-service" });
        var busClient = bus;
        using var service = bus.Subscribe("cross.bus-svc", "svc", (in BusMessage m) =>
        {
            var upper = Encoding.UTF8.GetString(m.Payload.ToArray()).ToUpperInvariant();
            busClient.Publish(
                m.ReplyTo,
                default,
                new ReadOnlySequence<byte>("NATS/1.0\r\nX-Responder: bus\r\n\r\n"u8.ToArray()),
                new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(upper)));
        });

        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("request.mjs", broker.Url, "cross.bus-svc", "10"));
    }

    [Fact(Timeout = 90_000)]
    public async Task Bus_requests_answered_by_js_and_c_responders()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var js = NodeScripts.Start("respond.mjs", broker.Url, "cross.js-svc", "3");
        await using var cResponder = c.Start("respond", broker.Url, "cross.c-svc", "3");
        await NodeScripts.WaitReadyAsync(js);
        await cResponder.WaitForLineAsync(line => line == ScenarioSummary.ReadyLine, CClient.Timeout);

        await using var bus = broker.Bus.CreateClient();
        for (var i = 0; i < 3; i++)
        {
            var fromJs = await bus.RequestAsync("cross.js-svc", Encoding.UTF8.GetBytes($"bus-{i}"), TimeSpan.FromSeconds(5));
            Assert.Equal($"BUS-{i}", Encoding.UTF8.GetString(fromJs.Payload.Span));
            Assert.Contains("X-Responder: js", Encoding.UTF8.GetString(fromJs.Headers.Span), StringComparison.Ordinal);

            var fromC = await bus.RequestAsync("cross.c-svc", Encoding.UTF8.GetBytes($"bus-{i}"), TimeSpan.FromSeconds(5));
            Assert.Equal($"BUS-{i}", Encoding.UTF8.GetString(fromC.Payload.Span));
        }

        ScenarioSummary.AssertOk(await js.WaitForExitAsync(NodeScripts.Timeout));
        ScenarioSummary.AssertOk(await cResponder.WaitForExitAsync(CClient.Timeout));
    }

    private static Task<SubscriptionHandler> UpperCaseResponderAsync(NatsConnection client, string subject) =>
        SubscriptionHandler.RespondAsync(client, subject, data => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(data).ToUpperInvariant()));
}
