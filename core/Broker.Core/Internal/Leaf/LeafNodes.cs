namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The broker's leaf nodes: its remotes (nats-server's <c>solicitLeafNodeRemotes</c>), one <see cref="LeafRemote"/>
/// each, dialling from <see cref="Start"/> until <see cref="StopAsync"/>, and the hub (<see cref="LeafHub"/>) when
/// <c>leafnodes.listen</c> is set. Each account with links has one <see cref="LeafInterest"/>, attached to the account's
/// index: the remotes' accounts when the broker is built (before any client subscribes), an account a spoke's user
/// binds when its first spoke comes; what the index already holds is counted then.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The token source is disposed by StopAsync, which the broker's stop always runs.")]
internal sealed class LeafNodes
{
    private readonly CancellationTokenSource stopping = new();
    private readonly List<Task> running = [];
    private readonly Lock gate = new();

    private LeafNodes(BrokerCore server)
    {
        Hub = server.Options.LeafNodes.Hub.IsEnabled ? new LeafHub(server, InterestFor) : null;
    }

    /// <summary>The remotes, in configuration order.</summary>
    public LeafRemote[] Remotes { get; private set; } = [];

    /// <summary>The hub, when the broker accepts spokes.</summary>
    public LeafHub? Hub { get; }

    /// <summary>The links connected now: the remotes', then the accepted ones.</summary>
    public LeafConnection[] Links =>
        [.. Remotes.Select(r => r.Link).Where(l => l is { IsEstablished: true })!, .. Hub?.Links.Where(l => l.IsEstablished) ?? []];

    /// <summary>The leaf nodes of <paramref name="server"/>'s options with the remotes' accounts' interest attached; null without remotes or hub.</summary>
    public static LeafNodes? Create(BrokerCore server)
    {
        var options = server.Options.LeafNodes;
        if (options.Remotes.Count == 0 && !options.Hub.IsEnabled)
        {
            return null;
        }

        var nodes = new LeafNodes(server);
        var remotes = new List<LeafRemote>();
        foreach (var remote in options.Remotes)
        {
            var name = string.IsNullOrEmpty(remote.Account) ? Accounts.Account.GlobalName : remote.Account;
            if (!server.Accounts.TryGet(name, out var account))
            {
                throw new InvalidOperationException($"cannot find local account \"{name}\" specified in leafnode remote");
            }

            remotes.Add(new LeafRemote(server, remote, nodes.InterestFor(account)));
        }

        nodes.Remotes = [.. remotes];
        return nodes;
    }

    /// <summary>
    /// The interest of <paramref name="account"/>'s links (<see cref="LeafInterest.Of"/>, shared with routes), attached
    /// to its index the first time; a spoke may bind an account after clients subscribed in it, which is counted then.
    /// </summary>
    public LeafInterest InterestFor(Accounts.Account account)
    {
        lock (gate)
        {
            return LeafInterest.Of(account);
        }
    }

    /// <summary>Starts the hub's listener and dialling every remote.</summary>
    public void Start()
    {
        Hub?.Start(stopping.Token);
        foreach (var remote in Remotes)
        {
            running.Add(Task.Run(() => remote.RunAsync(stopping.Token)));
        }
    }

    /// <summary>Closes the links, stops accepting and stops dialling.</summary>
    public async Task StopAsync()
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        foreach (var remote in Remotes)
        {
            remote.Link?.Close("Server Shutdown");
        }

        if (Hub is not null)
        {
            await Hub.StopAsync().ConfigureAwait(false);
        }

        await Task.WhenAll(running).ConfigureAwait(false);
        stopping.Dispose();
    }
}
