using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.JetStream.Tests;

/// <summary>The system account's JSZ requests answer with JetStream's own /jsz page (ours only: the page is ours).</summary>
public sealed class SystemJszTests
{
    [Fact(Timeout = 30_000)]
    public async Task Jsz_requests_carry_jetstreams_monitoring_page()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig("S", ["s.>"]) { Storage = NATS.Client.JetStream.Models.StreamConfigStorage.Memory });

        var page = server.Ours!.Server.Services.GetServices<IMonitoringEndpoint>().Single(e => e.Path == "/jsz");
        using var direct = JsonDocument.Parse(page.Handle(new Dictionary<string, string>()).Body);

        // An in-process client of the system account asks as a user of it would.
        await using var sys = server.Ours.Bus.CreateClient(new BusClientOptions { Account = "$SYS" });
        var reply = await sys.RequestAsync("$SYS.REQ.SERVER.PING.JSZ", default, default, TimeSpan.FromSeconds(5));
        using var answer = JsonDocument.Parse(reply.Payload);
        var data = answer.RootElement.GetProperty("data");
        Assert.Equal(
            direct.RootElement.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal),
            data.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));
        Assert.Equal(1, data.GetProperty("streams").GetInt32());
        Assert.True(answer.RootElement.GetProperty("server").GetProperty("jetstream").GetBoolean());

        // Options in the body become the page's query: accounts=true lists the account's details.
        reply = await sys.RequestAsync("$SYS.REQ.SERVER.PING.JSZ", default, Encoding.UTF8.GetBytes("""{"accounts":true}"""), TimeSpan.FromSeconds(5));
        using var withAccounts = JsonDocument.Parse(reply.Payload);
        Assert.Equal("$G", withAccounts.RootElement.GetProperty("data").GetProperty("account_details")[0].GetProperty("name").GetString());

        // The global account's JetStream detail, as nats-server's JszAccount gives it; an account without is an error.
        reply = await sys.RequestAsync("$SYS.REQ.ACCOUNT.$G.JSZ", default, default, TimeSpan.FromSeconds(5));
        using var account = JsonDocument.Parse(reply.Payload);
        Assert.Equal("$G", account.RootElement.GetProperty("data").GetProperty("name").GetString());
        reply = await sys.RequestAsync("$SYS.REQ.ACCOUNT.$SYS.JSZ", default, default, TimeSpan.FromSeconds(5));
        using var none = JsonDocument.Parse(reply.Payload);
        Assert.Equal("account \"$SYS\" not jetstream enabled", none.RootElement.GetProperty("error").GetProperty("description").GetString());
    }
}
