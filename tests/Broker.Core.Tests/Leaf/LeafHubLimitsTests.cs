using Broker.Core.Auth;
using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// An account's leaf node limit on the hub (a JWT's <c>limits.leaf</c>, a configured account's
/// <c>limits { max_leafnodes }</c>), enforced as nats-server 2.9.10's <c>registerWithAccount</c> does, run with both
/// hubs: a spoke beyond it is told <c>-ERR 'maximum account active connections exceeded'</c> (or <c>Authorization
/// Violation</c> for a user of the leaf block) and the linked one stays. Waits poll /leafz and the spoke's log.
/// </summary>
public sealed class LeafHubLimitsTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-leaf-limits-").FullName;

    public static TheoryData<ServerKind> HubKinds => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory]
    [MemberData(nameof(HubKinds))]
    public async Task A_spoke_beyond_the_account_jwts_leaf_limit_is_refused(ServerKind hubKind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(claims =>
        {
            claims.Name = "EDGE";
            claims.Nats.Limits.LeafNodeConnections = 1;
        });
        var (firstUser, firstJwt) = TestOperator.CreateUser(account);
        var (secondUser, secondJwt) = TestOperator.CreateUser(account);
        await using var hub = await HubUnderTest.StartInOperatorModeAsync(hubKind, op);
        await using var first = await LeafSpoke.StartAsync(ServerKind.Reference, new SpokeRemote(hub.LeafUrl()) { Credentials = TestJwt.WriteCreds(directory, "first", firstJwt, firstUser) });
        await hub.WaitForLinksAsync(1);
        await using var second = await LeafSpoke.StartAsync(ServerKind.Ours, new SpokeRemote(hub.LeafUrl()) { Credentials = TestJwt.WriteCreds(directory, "second", secondJwt, secondUser) });

        const string Expected = "maximum account active connections exceeded";
        await LeafTlsTests.WaitForLogAsync(second, Expected, times: 1);
        Assert.True(await Eventually.TrueAsync(() => hub.Log.Contains(Expected, StringComparison.Ordinal), TimeSpan.FromSeconds(10)), hub.Log);
        var leafz = await hub.LeafzAsync();
        Assert.Equal(1, leafz.GetProperty("leafnodes").GetInt32());
        Assert.Equal(1, (await LeafHub.GetAsync(hub.HttpPort, "/varz")).GetProperty("leafnodes").GetInt32());

        // The linked spoke gone, the other one gets in on a later attempt.
        await first.DisposeAsync();
        await second.WaitForLinksAsync(1);
    }

    public static TheoryData<ServerKind, bool> ConfiguredCases => new()
    {
        { ServerKind.Ours, true },
        { ServerKind.Ours, false },
        { ServerKind.Reference, true },
        { ServerKind.Reference, false },
    };

    /// <summary>
    /// A configured account's <c>limits { max_leafnodes }</c>: a spoke of the leaf block's users fails its user check
    /// (<c>Authorization Violation</c>), one authenticating as a broker user is told the limit.
    /// </summary>
    [Theory]
    [MemberData(nameof(ConfiguredCases))]
    public async Task A_spoke_beyond_a_configured_accounts_max_leafnodes_is_refused(ServerKind hubKind, bool leafUsers)
    {
        var users = leafUsers ? "{ user: ca, password: p }" : "{ user: s1, password: p }, { user: s2, password: p }";
        await using var hub = await HubUnderTest.StartAsync(
            hubKind,
            o =>
            {
                o.Accounts.Add(new AccountOptions
                {
                    Name = "A",
                    Users = leafUsers
                        ? [new UserOptions { User = "ca", Password = "p" }]
                        : [new UserOptions { User = "s1", Password = "p" }, new UserOptions { User = "s2", Password = "p" }],
                    Limits = new AccountLimitOptions { MaxLeafNodes = 1 },
                });
                if (leafUsers)
                {
                    o.LeafNodes.Hub.Users = [new LeafUserOptions { User = "s1", Password = "p", Account = "A" }, new LeafUserOptions { User = "s2", Password = "p", Account = "A" }];
                }
            },
            leafUsers ? "  authorization { users: [ { user: s1, password: p, account: A }, { user: s2, password: p, account: A } ] }" : "",
            $"accounts {{ A {{ users: [ {users} ], limits: {{ max_leafnodes: 1 }} }} }}");
        await using var first = await LeafSpoke.StartAsync(ServerKind.Reference, new SpokeRemote(hub.LeafUrl("s1:p")));
        await hub.WaitForLinksAsync(1);
        await using var second = await LeafSpoke.StartAsync(ServerKind.Ours, new SpokeRemote(hub.LeafUrl("s2:p")));

        await LeafTlsTests.WaitForLogAsync(second, leafUsers ? "Authorization Violation" : "maximum account active connections exceeded", times: 2);
        await first.WaitForLinksAsync(1);
        if (hubKind == ServerKind.Ours)
        {
            // nats-server 2.9.10 can list a refused broker-user spoke in /leafz after closing it (its
            // processLeafNodeConnect goes on to addLeafNodeConnection); the broker lists the links it has.
            Assert.Equal(1, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
        }
    }
}
