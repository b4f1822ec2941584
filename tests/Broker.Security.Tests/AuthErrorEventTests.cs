using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;
using NATS.NKeys;

namespace Broker.Security.Tests;

/// <summary>
/// nats-server 2.10's account-level authentication error event, <c>$SYS.ACCOUNT.CLIENT.AUTH.ERR</c>, published in the
/// account a failed client belongs to (<c>sendAccountAuthErrorEvent</c>): the client's own account (<c>$G</c> before it
/// authenticated), or the auth callout's account with the callout's reason. Ours only: nats-server 2.9.10 publishes
/// only the server-level <c>$SYS.SERVER.&lt;id&gt;.CLIENT.AUTH.ERR</c> (compared in the monitoring tests); the shape
/// follows nats-server v2.10.0's events.go.
/// </summary>
public sealed class AuthErrorEventTests
{
    private const string Subject = "$SYS.ACCOUNT.CLIENT.AUTH.ERR";

    private static async Task<JsonDocument> NextEventAsync(INatsSub<byte[]> subscription) =>
        JsonDocument.Parse((await subscription.NextAsync()).Data!);

    private static async Task RefuseAsync(TestBroker broker, string user, string password)
    {
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{password}\",\"verbose\":false,\"protocol\":1}}\r\nPING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await client.ExpectClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task A_failed_login_is_reported_in_the_global_account_and_nowhere_else()
    {
        await using var broker = await TestBroker.StartAsync(o =>
        {
            o.Authorization.Users.Add(new UserOptions { User = "watcher", Password = "watcher" });
            o.Accounts.Add(new AccountOptions { Name = "A", Users = [AccountIsolationTests.User("a")] });
        });
        await using var watcher = await NatsClients.ConnectAsync(broker.Url, "watcher", o => o.WithUser("watcher", "watcher"));
        await using var inA = await NatsClients.ConnectAsync(broker.Url, "a", o => o.WithUser("a", "a"));
        await using var events = await watcher.SubscribeCoreAsync<byte[]>(Subject);
        await using var aEvents = await inA.SubscribeCoreAsync<byte[]>(Subject);
        await watcher.PingAsync();
        await inA.PingAsync();

        await RefuseAsync(broker, "mallory", "guess");

        using var doc = await NextEventAsync(events);
        var root = doc.RootElement;
        Assert.Equal("io.nats.server.advisory.v1.client_disconnect", root.GetProperty("type").GetString());
        Assert.Equal("Authentication Failure", root.GetProperty("reason").GetString());
        var client = root.GetProperty("client");
        Assert.Equal("$G", client.GetProperty("acc").GetString());
        Assert.Equal("mallory", client.GetProperty("user").GetString());
        Assert.True(client.TryGetProperty("stop", out _));
        Assert.Equal(["type", "id", "timestamp", "server", "client", "sent", "received", "reason"], root.EnumerateObject().Select(p => p.Name));
        await inA.PingAsync();
        Assert.True(aEvents.IsEmpty());
    }

    [Fact(Timeout = 30_000)]
    public async Task A_callout_refusal_is_reported_in_the_callout_account_with_its_reason()
    {
        var issuer = KeyPair.CreatePair(PrefixByte.Account);
        await using var broker = await TestBroker.StartAsync(o =>
        {
            o.Accounts.Add(new AccountOptions { Name = "AUTH", Users = [AccountIsolationTests.User("auth")] });
            o.Accounts.Add(new AccountOptions { Name = "B" });
            o.Authorization.AuthCallout = new AuthCalloutOptions { Issuer = issuer.GetPublicKey(), Account = "AUTH", AuthUsers = ["auth"] };
        });
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Deny("bad password"));
        await using var watcher = await NatsClients.ConnectAsync(broker.Url, "watcher", o => o.WithUser("auth", "auth"));
        await using var events = await watcher.SubscribeCoreAsync<byte[]>(Subject);
        await watcher.PingAsync();

        await RefuseAsync(broker, "mallory", "guess");

        using var doc = await NextEventAsync(events);
        Assert.Equal("Auth callout service returned an error: bad password", doc.RootElement.GetProperty("reason").GetString());
        Assert.Equal("AUTH", doc.RootElement.GetProperty("client").GetProperty("acc").GetString());

        // An auth user failing the configuration is reported there too, as any failure with a configured callout.
        await RefuseAsync(broker, "auth", "wrong");
        using var second = await NextEventAsync(events);
        Assert.Equal("Authentication Failure", second.RootElement.GetProperty("reason").GetString());
        Assert.Equal("auth", second.RootElement.GetProperty("client").GetProperty("user").GetString());
    }
}
