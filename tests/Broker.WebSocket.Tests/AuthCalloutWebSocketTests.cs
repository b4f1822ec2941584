using Broker.Core.Auth;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.WebSocket.Tests;

/// <summary>A WebSocket client goes through the authorization callout as a NATS client does, named by its type <c>websocket</c>.</summary>
public sealed class AuthCalloutWebSocketTests
{
    [Fact(Timeout = 30_000)]
    public async Task WebSocket_client_is_authorized_by_the_callout_with_type_websocket()
    {
        var issuer = KeyPair.CreatePair(PrefixByte.Account);
        await using var broker = await WsBroker.StartAsync(o =>
        {
            o.Accounts.Add(new AccountOptions { Name = "AUTH", Users = [new UserOptions { User = "auth", Password = "auth" }] });
            o.Accounts.Add(new AccountOptions { Name = "B" });
            o.Authorization.AuthCallout = new AuthCalloutOptions { Issuer = issuer.GetPublicKey(), Account = "AUTH", AuthUsers = ["auth"] };
        });
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, request =>
            request.Nats.ConnectOptions.Username == "alice" ? new CalloutAnswer.Allow("B") : new CalloutAnswer.Deny("who?"));

        await using (var alice = await WsNatsClient.ConnectAsync(broker.WebSocketUri()))
        {
            await alice.SendAsync("CONNECT {\"verbose\":false,\"user\":\"alice\",\"pass\":\"x\"}\r\nPING\r\n");
            Assert.Equal(["PONG"], await alice.ReadUntilAsync("PONG"));
        }

        await using (var mallory = await WsNatsClient.ConnectAsync(broker.WebSocketUri()))
        {
            await mallory.SendAsync("CONNECT {\"verbose\":false,\"user\":\"mallory\",\"pass\":\"x\"}\r\nPING\r\n");
            Assert.Contains("-ERR 'Authorization Violation'", (await mallory.ExpectClosedAsync()).Lines);
        }

        Assert.All(service.Requests, r => Assert.Equal("websocket", r.Claims.Nats.ClientInfo.Type));
        Assert.Equal(2, service.Requests.Count);
    }
}
