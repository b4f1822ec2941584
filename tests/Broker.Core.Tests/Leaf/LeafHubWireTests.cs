using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.NKeys;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// The hub's bytes to a scripted spoke on a raw socket (nats-server's test/leafnode_test.go tier), each run against
/// nats-server 2.9.10 as the hub too: the first INFO's fields, the connect-info INFO and the interest snapshot with the
/// loop detection subject, which sent back is a loop; a second link under the same name replaces the first; a wrong
/// password; a client dialling the leaf port; no CONNECT in time; an LS+ outside the leaf user's permissions.
/// </summary>
public sealed class LeafHubWireTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task The_handshake_is_nats_servers_and_the_loop_subject_coming_back_is_a_loop(ServerKind kind)
    {
        await using var hub = await HubUnderTest.StartAsync(kind);
        await using var spoke = await RawClient.ConnectAsync(hub.LeafPort);
        var info = JsonDocument.Parse(spoke.Info!["INFO ".Length..]).RootElement;
        Assert.Equal(
            ["server_id", "server_name", "version", "proto", "go", "host", "port", "headers", "auth_required", "max_payload", "ip", "client_id", "nonce", "info_on_connect", "leafnode_urls"],
            info.EnumerateObject().Select(p => p.Name).ToArray());
        Assert.True(info.GetProperty("auth_required").GetBoolean());
        Assert.Equal($"127.0.0.1:{hub.LeafPort}", info.GetProperty("ip").GetString());
        Assert.Equal([$"127.0.0.1:{hub.LeafPort}"], info.GetProperty("leafnode_urls").EnumerateArray().Select(u => u.GetString()!).ToArray());
        Assert.True(info.GetProperty("client_id").GetUInt64() > 0);
        Assert.EndsWith("} ", spoke.Info, StringComparison.Ordinal);

        await spoke.SendAsync("CONNECT {\"name\":\"raw\",\"headers\":true}\r\n");
        var connectInfo = JsonDocument.Parse((await spoke.ReadLineAsync())["INFO ".Length..]).RootElement;
        Assert.True(connectInfo.GetProperty("connect_info").GetBoolean());
        Assert.Equal("$G", connectInfo.GetProperty("remote_account").GetString());
        Assert.False(connectInfo.TryGetProperty("nonce", out _));

        var snapshot = await spoke.PingAndCollectAsync();
        var loop = snapshot.Lines.Single(l => l.StartsWith("LS+ $LDS.", StringComparison.Ordinal));
        await spoke.SendAsync(loop + "\r\n");
        var lines = await spoke.ExpectClosedAsync();
        Assert.Contains("-ERR 'Loop detected for leafnode account=\"$G\". Delaying attempt to reconnect for 30s'", lines);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_second_link_under_the_same_name_replaces_the_first(ServerKind kind)
    {
        await using var hub = await HubUnderTest.StartAsync(kind);
        await using var first = await RawClient.ConnectAsync(hub.LeafPort);
        await first.SendAsync("CONNECT {\"name\":\"edge\"}\r\nLS+ first.only\r\n");
        await first.PingAndCollectAsync();
        await hub.WaitForLinksAsync(1, "first.only");

        await using var second = await RawClient.ConnectAsync(hub.LeafPort);
        await second.SendAsync("CONNECT {\"name\":\"edge\"}\r\n");
        Assert.Contains("-ERR 'Duplicate Remote LeafNode Connection'", await first.ExpectClosedAsync());
        await second.SendAsync("LS+ second.only\r\n");
        await second.PingAndCollectAsync();
        await hub.WaitForLinksAsync(1, "second.only");
        var subjects = (await hub.LeafzAsync()).GetProperty("leafs")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString());
        Assert.DoesNotContain("first.only", subjects);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_wrong_password_or_a_client_is_refused(ServerKind kind)
    {
        await using var hub = await HubUnderTest.StartAsync(
            kind,
            o => (o.LeafNodes.Hub.User, o.LeafNodes.Hub.Password) = ("leaf", "s3cret"),
            "  authorization { user: leaf, password: s3cret }");
        await using (var wrong = await RawClient.ConnectAsync(hub.LeafPort))
        {
            await wrong.SendAsync("CONNECT {\"user\":\"leaf\",\"pass\":\"bad\",\"name\":\"x\"}\r\n");
            Assert.Equal(["-ERR 'Authorization Violation'"], await wrong.ExpectClosedAsync());
        }

        await using (var client = await RawClient.ConnectAsync(hub.LeafPort))
        {
            await client.SendAsync("CONNECT {\"lang\":\"go\",\"user\":\"leaf\",\"pass\":\"s3cret\"}\r\n");
            Assert.Equal(["-ERR 'attempted to connect to leaf node port'"], await client.ExpectClosedAsync());
        }

        await using var right = await RawClient.ConnectAsync(hub.LeafPort);
        await right.SendAsync("CONNECT {\"user\":\"leaf\",\"pass\":\"s3cret\",\"name\":\"x\"}\r\n");
        Assert.StartsWith("INFO {", await right.ReadLineAsync(), StringComparison.Ordinal);
        await hub.WaitForLinksAsync(1);
    }

    /// <summary>An NKey user (nats-server 2.11+ spokes send <c>nkey</c>): the signature of the INFO's nonce lets it in, a wrong one does not.</summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task An_nkey_user_signs_the_nonce(ServerKind kind)
    {
        var user = KeyPair.CreatePair(PrefixByte.User);
        var other = KeyPair.CreatePair(PrefixByte.User);
        await using var hub = await HubUnderTest.StartAsync(
            kind,
            o => o.Authorization.Users = [new UserOptions { Nkey = user.GetPublicKey() }],
            extra: $"authorization {{ users: [ {{ nkey: {user.GetPublicKey()} }} ] }}");
        foreach (var (signer, admitted) in new[] { (other, false), (user, true) })
        {
            await using var spoke = await RawClient.ConnectAsync(hub.LeafPort);
            var nonce = JsonDocument.Parse(spoke.Info!["INFO ".Length..]).RootElement.GetProperty("nonce").GetString()!;
            var signature = new byte[64];
            signer.Sign(System.Text.Encoding.ASCII.GetBytes(nonce), signature);
            await spoke.SendAsync($"CONNECT {{\"nkey\":\"{user.GetPublicKey()}\",\"sig\":\"{System.Buffers.Text.Base64Url.EncodeToString(signature)}\",\"name\":\"n\"}}\r\n");
            if (admitted)
            {
                Assert.StartsWith("INFO {", await spoke.ReadLineAsync(), StringComparison.Ordinal);
                await hub.WaitForLinksAsync(1);
            }
            else
            {
                Assert.Equal(["-ERR 'Authorization Violation'"], await spoke.ExpectClosedAsync());
            }
        }
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_spoke_without_a_connect_in_time_is_told_so(ServerKind kind)
    {
        await using var hub = await HubUnderTest.StartAsync(kind, o => o.LeafNodes.Hub.AuthTimeout = TimeSpan.FromSeconds(1), "  authorization { timeout: 1 }");
        await using var spoke = await RawClient.ConnectAsync(hub.LeafPort);
        Assert.Equal(["-ERR 'Authentication Timeout'"], await spoke.ExpectClosedAsync(TimeSpan.FromSeconds(5)));
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task An_interest_outside_the_leaf_users_permissions_closes_the_link(ServerKind kind)
    {
        await using var hub = await HubUnderTest.StartAsync(
            kind,
            o => o.Authorization.Users = [new UserOptions { User = "leaf", Password = "p", Permissions = new PermissionsOptions { Subscribe = new() { Allow = ["down.>"] } } }],
            extra: "authorization { users: [ { user: leaf, password: p, permissions: { subscribe: \"down.>\" } } ] }");
        await using var spoke = await RawClient.ConnectAsync(hub.LeafPort);
        await spoke.SendAsync("CONNECT {\"user\":\"leaf\",\"pass\":\"p\",\"name\":\"x\"}\r\n");
        var connectInfo = JsonDocument.Parse((await spoke.ReadLineAsync())["INFO ".Length..]).RootElement;
        Assert.Equal("down.>", connectInfo.GetProperty("import").GetProperty("allow")[0].GetString());

        await spoke.SendAsync("LS+ down.ok\r\nLS+ other.x\r\n");
        var lines = await spoke.ExpectClosedAsync();
        Assert.Contains("-ERR 'Permissions Violation for Subscription to \"other.x\"'", lines);
    }
}
