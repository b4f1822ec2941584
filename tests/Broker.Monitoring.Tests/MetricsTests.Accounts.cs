using Broker.Core.Auth;

namespace Broker.Monitoring.Tests;

/// <summary>The per-account series of /metrics.</summary>
public sealed partial class MetricsTests
{
    [Fact(Timeout = 30_000)]
    public async Task Connections_and_subscriptions_are_reported_per_account()
    {
        await using var broker = await MonitoredBroker.StartAsync(options =>
        {
            options.Accounts =
            [
                new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }] },
                new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }] },
            ];
            options.Authorization.Users = [new UserOptions { User = "g", Password = "g" }];
            options.Authorization.Timeout = TimeSpan.FromSeconds(30);
            // Without the system account, whose own subscriptions (its request services) count too, as nats-server's do.
            options.NoSystemAccount = true;
        });
        await using var a1 = await broker.ConnectAsync("{\"verbose\":false,\"user\":\"a\",\"pass\":\"a\"}");
        await using var a2 = await broker.ConnectAsync("{\"verbose\":false,\"user\":\"a\",\"pass\":\"a\"}");
        await using var g = await broker.ConnectAsync("{\"verbose\":false,\"user\":\"g\",\"pass\":\"g\"}");
        await a1.SendAsync("SUB foo 1\r\nSUB bar 2\r\n");
        await a1.PingAndCollectAsync();
        await a2.SendAsync("SUB foo 1\r\n");
        await a2.PingAndCollectAsync();
        await g.SendAsync("SUB foo 1\r\n");
        await g.PingAndCollectAsync();

        // An in-process client's subscription counts in its account, the client itself is no connection.
        await using var bus = broker.Broker.Bus.CreateClient();
        using var subscription = bus.Subscribe("svc", null, (in Broker.Abstractions.BusMessage _) => { });

        // A connection that has not sent CONNECT is in $G, as in /accountz.
        await using var silent = await Broker.TestKit.RawClient.ConnectAsync(broker.Broker.EndPoint);
        await Eventually.AssertAsync(async () => (await broker.GetJsonAsync("/connz")).GetProperty("total").GetInt32() == 4, "the silent connection to be listed");

        var (_, text, response) = await broker.GetAsync("/metrics");
        response.Dispose();
        var metrics = Parse(text);
        Assert.Equal(2, metrics.Value("broker_account_connections", ("account", "A")));
        Assert.Equal(0, metrics.Value("broker_account_connections", ("account", "B")));
        Assert.Equal(2, metrics.Value("broker_account_connections", ("account", "$G")));
        foreach (var account in new[] { "A", "B", "$G" })
        {
            var detail = (await broker.GetJsonAsync("/accountz?acc=" + Uri.EscapeDataString(account))).GetProperty("account_detail");
            Assert.Equal(detail.GetProperty("client_connections").GetInt32(), metrics.Value("broker_account_connections", ("account", account)));
            Assert.Equal(detail.GetProperty("subscriptions").GetInt32(), metrics.Value("broker_account_subscriptions", ("account", account)));
        }

        Assert.Equal(3, metrics.Value("broker_account_subscriptions", ("account", "A")));
        Assert.Equal(0, metrics.Value("broker_account_subscriptions", ("account", "B")));
        Assert.Equal(2, metrics.Value("broker_account_subscriptions", ("account", "$G")));
        Assert.Equal(5, metrics.Value("broker_subscriptions"));
        Assert.Equal("gauge", metrics.Types["broker_account_connections"]);
    }
}
