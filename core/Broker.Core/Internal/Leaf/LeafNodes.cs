namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The broker's leaf node remotes (nats-server's <c>solicitLeafNodeRemotes</c>): one <see cref="LeafInterest"/> per
/// bound account, attached to the account's index when the broker is built (before any client subscribes; what the
/// index already holds is counted then), and one
/// <see cref="LeafRemote"/> per remote, dialling from <see cref="Start"/> until <see cref="StopAsync"/>.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The token source is disposed by StopAsync, which the broker's stop always runs.")]
internal sealed class LeafNodes
{
    private readonly CancellationTokenSource stopping = new();
    private readonly List<Task> running = [];

    private LeafNodes(LeafRemote[] remotes)
    {
        Remotes = remotes;
    }

    /// <summary>The remotes, in configuration order.</summary>
    public LeafRemote[] Remotes { get; }

    /// <summary>The links connected now.</summary>
    public LeafConnection[] Links => [.. Remotes.Select(r => r.Link).Where(l => l is { IsEstablished: true })!];

    /// <summary>The remotes of <paramref name="server"/>'s options with their accounts' interest attached; null without remotes.</summary>
    public static LeafNodes? Create(BrokerCore server)
    {
        var options = server.Options.LeafNodes;
        if (options.Remotes.Count == 0)
        {
            return null;
        }

        var remotes = new List<LeafRemote>();
        foreach (var remote in options.Remotes)
        {
            var name = string.IsNullOrEmpty(remote.Account) ? Accounts.Account.GlobalName : remote.Account;
            if (!server.Accounts.TryGet(name, out var account))
            {
                throw new InvalidOperationException($"cannot find local account \"{name}\" specified in leafnode remote");
            }

            remotes.Add(new LeafRemote(server, remote, LeafInterest.Of(account)));
        }

        return new LeafNodes([.. remotes]);
    }

    /// <summary>Starts dialling every remote.</summary>
    public void Start()
    {
        foreach (var remote in Remotes)
        {
            running.Add(Task.Run(() => remote.RunAsync(stopping.Token)));
        }
    }

    /// <summary>Closes the links and stops dialling.</summary>
    public async Task StopAsync()
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        foreach (var remote in Remotes)
        {
            remote.Link?.Close("Server Shutdown");
        }

        await Task.WhenAll(running).ConfigureAwait(false);
        stopping.Dispose();
    }
}
