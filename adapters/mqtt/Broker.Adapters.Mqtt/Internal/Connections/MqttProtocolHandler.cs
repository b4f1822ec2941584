using System.Collections.Concurrent;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The <c>"mqtt"</c> protocol: serves connections of the MQTT listener and those the WebSocket plugin hands over from
/// its <c>/mqtt</c> path. Holds what the connections share (options, the bus, each account's MQTT state) and runs one
/// timer for all of them (keep alive, CONNECT timeout, session expiry), so an idle connection costs no timer of its own.
/// </summary>
internal sealed class MqttProtocolHandler : IReportingProtocolHandler, IHostedLifecycleService, IAsyncDisposable
{
    /// <summary>How often keep alives, CONNECT timeouts and session expiry are checked.</summary>
    private static readonly TimeSpan SweepInterval = TimeSpan.FromMilliseconds(250);

    // A stop waits this long for queued retained writes (thousands apply in seconds on a loaded machine's file store).
    private static readonly TimeSpan RetainedDrainTimeout = TimeSpan.FromSeconds(30);

    /// <summary>The peak of connections from which the set is replaced by a smaller one once a quarter is left.</summary>
    internal const int ShrinkConnectionsFrom = 1024;

    // Added to and removed from under the gate (once per connection, never per packet); readers take the field as it
    // is (a replaced set is a snapshot of its moment, and the connection it missed is in the new one). The value is
    // whom to tell the connection's end (Serve), or null when the caller waits on its task (OnConnectionAsync).
    private readonly Lock gate = new();
    private ConcurrentDictionary<MqttConnection, IServedConnectionEnd?> connections = new();
    private int connectionsPeak;
    private readonly CancellationTokenSource stopping = new();

    // The stop tokens connections were handed with (a listener's), each watched once for all its connections.
    private readonly ConcurrentDictionary<CancellationToken, CancellationTokenRegistration> stopTokens = new();
    private Task sweeper = Task.CompletedTask;

    /// <param name="options">The adapter's options.</param>
    /// <param name="bus">The broker's bus.</param>
    /// <param name="jetStreamEnabled">Whether the broker runs JetStream: each account's state is then on its JetStream.</param>
    /// <param name="logger">The adapter's logger.</param>
    public MqttProtocolHandler(MqttOptions options, IMessageBus bus, bool jetStreamEnabled, ILogger logger)
    {
        Options = options;
        Bus = bus;
        Logger = logger;
        Accounts = new MqttAccounts(options, bus, jetStreamEnabled, logger);
    }

    public string Protocol => MqttPlugin.ProtocolName;

    public MqttOptions Options { get; }

    public IMessageBus Bus { get; }

    /// <summary>The MQTT state (sessions, retained messages, QoS 1 and 2) of each account with MQTT clients.</summary>
    public MqttAccounts Accounts { get; }

    public ILogger Logger { get; }

    /// <summary>Connections being served now.</summary>
    public int ConnectionCount => Volatile.Read(ref connections).Count;

    /// <summary>The connections being served now.</summary>
    public IEnumerable<MqttConnection> Connections => Volatile.Read(ref connections).Keys;

    /// <summary>How many times the connection set was replaced by a smaller one (tests read it).</summary>
    internal int ConnectionShrinks { get; private set; }

    /// <summary>Serves one connection: its own loop (<see cref="MqttConnection.RunAsync"/>) is the task, and leaves the list when it ends.</summary>
    public Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken) => Start(connection, null, cancellationToken);

    /// <summary>
    /// Serves one connection of the broker's own listener: the loop tells <paramref name="served"/> when it left the list
    /// (<see cref="Remove"/>), so the listener keeps no continuation per connection (issue 25). The loop's task is not
    /// watched: what would fault it is logged and swallowed (<see cref="SwallowsFailure"/>).
    /// </summary>
    public void Serve(TransportConnection connection, IServedConnectionEnd served, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(served);
        _ = Start(connection, served, cancellationToken);
    }

    private Task Start(TransportConnection connection, IServedConnectionEnd? end, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);

        // A plain TCP connection reads and sends on demand: an idle session then holds no pipe, loop or buffer of its
        // transport (issue 25). TLS and WebSocket bring pipes of their own.
        if (connection.Transport is IOnDemandTransport onDemand)
        {
            onDemand.UseOnDemandInput();
            onDemand.UseOnDemandOutput();
        }

        var client = new MqttConnection(this, connection, cancellationToken);
        lock (gate)
        {
            connections.TryAdd(client, end);
            connectionsPeak = Math.Max(connectionsPeak, connections.Count);
        }

        WatchStopToken(cancellationToken);
        if (end is not null && client.Packets.CanPark)
        {
            // Nobody waits for a served connection's end (it tells end itself): its loop parks between reads.
            client.Packets.Run();
            return Task.CompletedTask;
        }

        return client.RunAsync();
    }

    /// <summary>
    /// Wakes the pending read of every connection handed with <paramref name="token"/> when it fires; a connection's loop then finds its
    /// token cancelled and says goodbye (<see cref="MqttConnection.RunAsync"/>). One registration per token, made with
    /// its first connection (a token already cancelled wakes them at once), instead of one per pending read.
    /// </summary>
    private void WatchStopToken(CancellationToken token)
    {
        if (!token.CanBeCanceled || stopTokens.ContainsKey(token))
        {
            return;
        }

        var registration = token.UnsafeRegister(static state => ((MqttProtocolHandler)state!).WakeStopping(), this);
        if (!stopTokens.TryAdd(token, registration))
        {
            registration.Dispose();
        }
    }

    private void WakeStopping()
    {
        foreach (var (connection, _) in Volatile.Read(ref connections))
        {
            if (connection.Stopping.IsCancellationRequested)
            {
                connection.WakeReader();
            }
        }
    }

    /// <summary>
    /// A connection's loop ended (<see cref="MqttConnection.RunAsync"/>). A ConcurrentDictionary never shrinks: after
    /// 10,000 connections left, the set kept ~290 KB of buckets (issue 25), so once a quarter of its peak is left it
    /// is copied into a fresh one.
    /// </summary>
    internal void Remove(MqttConnection connection)
    {
        IServedConnectionEnd? end;
        lock (gate)
        {
            if (!connections.TryRemove(connection, out end))
            {
                return;
            }

            var count = connections.Count;
            if (connectionsPeak >= ShrinkConnectionsFrom && count <= connectionsPeak / 4)
            {
                Volatile.Write(ref connections, new ConcurrentDictionary<MqttConnection, IServedConnectionEnd?>(connections));
                connectionsPeak = count;
                ConnectionShrinks++;
            }
        }

        end?.Ended(connection.Transport, null);
    }

    /// <summary>
    /// Whether the loop of <paramref name="connection"/> should catch <paramref name="failure"/>, which it has no
    /// handling of: when served by <see cref="Serve"/>, nobody watches its task, so it is logged here (as the listener
    /// logs a failed task) and the loop ends as after a read error.
    /// </summary>
    internal bool SwallowsFailure(MqttConnection connection, Exception failure)
    {
        if (!Volatile.Read(ref connections).TryGetValue(connection, out var end) || end is null)
        {
            return false;
        }

        MqttLog.ConnectionFailed(Logger, connection.ToString(), failure);
        return true;
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        sweeper = SweepAsync(stopping.Token);
        return Task.CompletedTask;
    }

    Task IHostedLifecycleService.StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    Task IHostedLifecycleService.StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>
    /// Before any service stops (JetStream among them): waits, at most <see cref="RetainedDrainTimeout"/>, for the
    /// retained writes every account has queued, which clients had published before their connections closed.
    /// </summary>
    async Task IHostedLifecycleService.StoppingAsync(CancellationToken cancellationToken)
    {
        try
        {
            await Task.WhenAll(Accounts.All.Select(account => account.Retained.Store.FlushAsync())).WaitAsync(RetainedDrainTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            MqttLog.RetainedDrainTimedOut(Logger, RetainedDrainTimeout);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
    }

    Task IHostedLifecycleService.StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        await sweeper.ConfigureAwait(false);
        await Accounts.DisposeAsync().ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (!stopping.IsCancellationRequested)
        {
            await stopping.CancelAsync().ConfigureAwait(false);
        }

        await sweeper.ConfigureAwait(false);
        await Accounts.DisposeAsync().ConfigureAwait(false);
        foreach (var (_, registration) in stopTokens)
        {
            await registration.DisposeAsync().ConfigureAwait(false);
        }

        stopping.Dispose();
    }

    private async Task SweepAsync(CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(SweepInterval);
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
            {
                var now = Environment.TickCount64;
                // The dictionary itself, not its Keys (a list of every connection, four times a second).
                foreach (var (connection, _) in Volatile.Read(ref connections))
                {
                    connection.CheckTimers(now);
                }

                await Accounts.ExpireAsync(now).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
