using System.Net;
using Broker.Core;

namespace Broker.TestKit;

/// <summary>
/// Starts either our broker or the reference server with the same settings: a lambda for our options and the
/// equivalent nats-server config text (both written by the test, side by side).
/// </summary>
public sealed class ServerUnderTest : IAsyncDisposable
{
    private readonly TestBroker? ours;
    private readonly ReferenceServer? reference;

    private ServerUnderTest(TestBroker? ours, ReferenceServer? reference)
    {
        this.ours = ours;
        this.reference = reference;
    }

    public EndPoint EndPoint => ours?.EndPoint ?? reference!.EndPoint;

    /// <summary>The client URL, <c>nats://127.0.0.1:port</c>, for real client libraries.</summary>
    public string Url => ours?.Url ?? reference!.Url;

    public ServerKind Kind => ours is null ? ServerKind.Reference : ServerKind.Ours;

    public TestBroker? Ours => ours;

    public static async Task<ServerUnderTest> StartAsync(ServerKind kind, Action<BrokerOptions>? configure = null, string? referenceConfig = null)
    {
        if (kind == ServerKind.Ours)
        {
            return new ServerUnderTest(await TestBroker.StartAsync(configure).ConfigureAwait(false), null);
        }

        return new ServerUnderTest(null, await ReferenceServer.StartAsync(referenceConfig).ConfigureAwait(false));
    }

    public Task<RawClient> ConnectAsync(bool readInfo = true) => RawClient.ConnectAsync(EndPoint, readInfo);

    /// <summary>Connects, sends <paramref name="input"/>, then PING, and returns what came back up to PONG or close.</summary>
    public async Task<Transcript> RunAsync(string input, TimeSpan? timeout = null)
    {
        await using var client = await ConnectAsync().ConfigureAwait(false);
        await client.SendAsync(input).ConfigureAwait(false);
        return await client.PingAndCollectAsync(timeout).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (ours is not null)
        {
            await ours.DisposeAsync().ConfigureAwait(false);
        }

        if (reference is not null)
        {
            await reference.DisposeAsync().ConfigureAwait(false);
        }
    }
}
