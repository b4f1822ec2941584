using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using NATS.NKeys;
using Xunit;
using Xunit.Abstractions;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// A creds file against an operator-mode nats-server 2.9.10 hub: the user JWT with the hub's nonce signed binds the
/// link to the user's account, and the user's permissions, which the hub sends back in its connect-info INFO, are kept
/// by the spoke before anything is sent (a 2.9.10 hub closes a link whose literal LS+ exceeds them). Run with
/// nats-server as the spoke too, and with our broker in operator mode as the hub.
/// </summary>
public sealed class LeafCredentialsTests(ITestOutputHelper output) : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-leaf-creds-").FullName;

    public static TheoryData<ServerKind, ServerKind> Pairs => new()
    {
        { ServerKind.Reference, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Ours },
    };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_creds_file_binds_the_link_and_its_permissions_are_kept(ServerKind hubKind, ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(claims => claims.Name = "EDGE");
        var (leafUser, leafJwt) = TestOperator.CreateUser(account, claims =>
        {
            claims.Nats.Publish = new() { Allow = ["up.>"] };
            claims.Nats.Subscribe = new() { Allow = ["down.>"] };
        });
        var creds = TestJwt.WriteCreds(directory, "leaf", leafJwt, leafUser);
        var (clientUser, clientJwt) = TestOperator.CreateUser(account);
        var clientCreds = TestJwt.WriteCreds(directory, "client", clientJwt, clientUser);

        await using var hub = await HubUnderTest.StartInOperatorModeAsync(hubKind, op);
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Credentials = creds });
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub", o => o with { AuthOpts = o.AuthOpts with { CredsFile = clientCreds } });
        await LeafScenarios.PermissionsAreKeptAsync(onHub, onSpoke, s => hub.WaitForLinksAsync(1, s), s => spoke.WaitForLinksAsync(1, s), hub.LeafzAsync);
        var leafz = await hub.LeafzAsync();
        output.WriteLine(leafz.ToString());
        Assert.Equal(account.GetPublicKey(), leafz.GetProperty("leafs")[0].GetProperty("account").GetString());
        Assert.DoesNotContain("Permissions Violation", hub.Log, StringComparison.Ordinal);
    }
}
