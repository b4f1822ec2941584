namespace Broker.Core;

/// <summary>
/// Leaf node connections (nats-server's <c>leafnodes { }</c>). The broker solicits each remote as a spoke: its clients
/// reach the hub's subscribers and the hub's clients reach its subscribers, one local account per remote. With
/// <see cref="Hub"/> listening it accepts spokes itself. Default: no remotes, not listening.
/// </summary>
public sealed class LeafNodeOptions
{
    /// <summary>The hubs to connect to (nats-server's <c>remotes</c>). Default empty.</summary>
    public IList<LeafRemoteOptions> Remotes { get; set; } = [];

    /// <summary>
    /// How long to wait before connecting again after a link is lost or a connection attempt fails (nats-server's
    /// <c>reconnect</c>, in seconds there). Default 1 second.
    /// </summary>
    public TimeSpan ReconnectInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Accepting spokes (nats-server's <c>listen</c>, <c>authorization</c>, <c>advertise</c>). Default: not listening.</summary>
    public LeafHubOptions Hub { get; set; } = new();

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public LeafNodeOptions Clone() => new() { Remotes = [.. Remotes.Select(r => r.Clone())], ReconnectInterval = ReconnectInterval, Hub = Hub.Clone() };

    /// <summary>Checks the hub settings and the remotes against the accounts that exist, with nats-server's texts where it has them.</summary>
    /// <param name="options">The options these belong to.</param>
    /// <exception cref="InvalidOperationException">A remote is invalid; the message says why.</exception>
    public void Validate(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Hub.Validate(options);
        if (Remotes.Count == 0)
        {
            return;
        }

        if (ReconnectInterval <= TimeSpan.Zero)
        {
            throw new InvalidOperationException("leafnodes: reconnect must be positive");
        }

        if (options.Operator.IsEnabled)
        {
            throw new InvalidOperationException("leafnodes: remotes in operator mode are not supported yet");
        }

        foreach (var remote in Remotes)
        {
            remote.Validate(options);
        }
    }
}
