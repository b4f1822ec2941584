using System.Text.Json;
using Broker.Core.Tests.Leaf;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// What the cluster tells beyond messages: lame duck mode announced to the members (a nats-server member then drops our
/// URL from its clients' INFO before the route closes), <c>no_advertise</c> keeping members' URLs from clients, the
/// system account's ROUTEZ request answered with the routes, /varz's cluster block.
/// </summary>
public sealed class RouteAnnouncementTests
{
    [Fact]
    public async Task Lame_duck_mode_is_announced_to_the_cluster_and_the_clients()
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A", configure: o =>
        {
            o.LameDuckGracePeriod = TimeSpan.FromSeconds(30);
            o.LameDuckDuration = TimeSpan.FromSeconds(60);
        });
        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()]);
        await b.WaitForRoutesAsync(1);
        var ours = new Uri(a.ClientUrl).Authority;
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");
        Assert.True(await Eventually.TrueAsync(() => onB.ServerInfo!.ClientConnectUrls?.Contains(ours) == true), "B's client to know our URL");
        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        var lameDuck = new TaskCompletionSource();
        onA.LameDuckModeActivated += (_, _) =>
        {
            lameDuck.TrySetResult();
            return default;
        };

        _ = a.Ours!.Server.EnterLameDuckModeAsync();

        // B drops our URL on the INFO with ldm, long before the grace period ends and the route closes.
        Assert.True(await Eventually.TrueAsync(() => onB.ServerInfo!.ClientConnectUrls?.Contains(ours) == false), "B's client to forget our URL");
        Assert.Equal(1, (await b.RoutezAsync()).GetProperty("num_routes").GetInt32());
        await lameDuck.Task.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task No_advertise_keeps_the_cluster_urls_from_clients()
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A", configure: o => o.Cluster.NoAdvertise = true);
        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()]);
        await a.WaitForRoutesAsync(1);
        await using var raw = await RawClient.ConnectAsync(a.Ours!.EndPoint);
        Assert.DoesNotContain("connect_urls", raw.Info, StringComparison.Ordinal);
        Assert.Contains("\"cluster\":\"C\"", raw.Info, StringComparison.Ordinal);
        var varz = await LeafHub.GetAsync(a.HttpPort, "/varz");
        Assert.False(varz.TryGetProperty("connect_urls", out _));
    }

    [Fact]
    public async Task The_system_account_answers_routez_and_varz_shows_the_cluster()
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A", configure: o =>
        {
            o.Accounts.Add(new Broker.Core.Auth.AccountOptions { Name = "SYS", Users = [new Broker.Core.Auth.UserOptions { User = "sys", Password = "pwd" }] });
            o.SystemAccount = "SYS";
        });
        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()]);
        await a.WaitForRoutesAsync(1);

        var varz = await LeafHub.GetAsync(a.HttpPort, "/varz");
        Assert.Equal(1, varz.GetProperty("routes").GetInt32());
        var cluster = varz.GetProperty("cluster");
        Assert.Equal(("C", a.ClusterPort), (cluster.GetProperty("name").GetString(), cluster.GetProperty("cluster_port").GetInt32()));

        await using var sys = await NatsClients.ConnectAsync(a.ClientUrl, "sys", o => o.WithUser("sys", "pwd"));
        var reply = await sys.RequestAsync<string, string>("$SYS.REQ.SERVER.PING.ROUTEZ", "");
        using var answer = JsonDocument.Parse(reply.Data!);
        var data = answer.RootElement.GetProperty("data");
        Assert.Equal(1, data.GetProperty("num_routes").GetInt32());
        Assert.False(string.IsNullOrEmpty(data.GetProperty("routes")[0].GetProperty("remote_id").GetString()));
    }
}
