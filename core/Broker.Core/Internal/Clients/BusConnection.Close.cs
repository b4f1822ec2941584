using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Transport;

using ClosedState = Broker.Core.Internal.Clients.CloseReason;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Closing an adapter's connection, once, from whichever side is first. The adapter closes it (dispose: "Client
/// Closed", or <see cref="Close"/> with its own reason) and keeps its transport. The broker closes it as a slow consumer
/// (aborting the transport at once, without flushing, as for NATS), when a reload no longer authenticates its user or
/// lowers <c>max_connections</c> below the connections open, and for shutdown (completing the output, so what is buffered is sent before the transport closes). Either way the
/// client leaves the connection list, is remembered among /connz's closed connections, and <see cref="Closed"/> is
/// cancelled, its callbacks on the thread pool so no adapter code runs under a producer's locks.
/// </summary>
internal sealed partial class BusConnection
{
    // Made when Closed is first asked for: an adapter that never watches it (MQTT) holds none (issue 25). Once the
    // close was signalled (signalled = 1), a token asked for later is cancelled at once.
    private CancellationTokenSource? closed;
    private int signalled;
    private string? closeReason;

    public CancellationToken Closed
    {
        get
        {
            if (Volatile.Read(ref closed) is { } made)
            {
                return made.Token;
            }

            if (Volatile.Read(ref signalled) != 0)
            {
                return new CancellationToken(canceled: true);
            }

            var source = new CancellationTokenSource();
            if (Interlocked.CompareExchange(ref closed, source, null) is { } other)
            {
                source.Dispose();
                return other.Token;
            }

            // Both sides write, then read the other's field, with full fences: either the close sees this source or
            // this sees the close.
            if (Volatile.Read(ref signalled) != 0)
            {
                source.Cancel();
            }

            return source.Token;
        }
    }

    public string? CloseReason => Volatile.Read(ref closeReason);

    public string ClosedReasonText => CloseReason ?? string.Empty;

    private CloseStamp closedAt;

    public DateTimeOffset? ClosedAt => closedAt.Read();

    protected override string ClosedMessage => "The bus connection was closed: " + (CloseReason ?? "Client Closed");

    public void Close(string reason)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        if (!TryClose(reason))
        {
            return;
        }

        if (reason == ClosedState.SlowConsumerPendingBytes.ToText() || reason == SocketConnection.WriteDeadlineReason)
        {
            // An adapter that writes its own output found its client too far behind: a slow consumer as any other.
            Interlocked.Increment(ref Server.Statistics.SlowConsumers);
            InProcessLog.SlowConsumer(logger, this, reason);
        }

        lock (output.Gate)
        {
            // The transport stays the adapter's: send what was written, and write nothing more.
            output.Detach();
        }

        Cleanup();
    }

    protected override void CloseByOwner() => Close(ClosedState.ClientClosed.ToText());

    public void CloseForShutdown() => CloseByBroker(ClosedState.ServerShutdown.ToText(), abortTransport: false);

    /// <summary>
    /// Closes as a connection over a lowered <c>max_connections</c>: what is buffered is sent, then the transport
    /// closes (nats-server has no refusal to send an MQTT client that is past its CONNECT).
    /// </summary>
    public void CloseForMaxConnections()
    {
        if (!IsClosed)
        {
            InProcessLog.MaxConnectionsExceeded(logger, this);
        }

        CloseByBroker(ClosedState.MaxConnectionsExceeded.ToText(), abortTransport: false);
    }

    /// <summary>Closes on the broker's initiative; cleaned up on the thread pool, since the caller may be any producer.</summary>
    private void CloseByBroker(string reason, bool abortTransport)
    {
        if (TryClose(reason))
        {
            EndClosed(reason, abortTransport);
        }
    }

    /// <summary>Ends the output and the transport of a client <see cref="TryClose"/> marked closed, and cleans it up.</summary>
    private void EndClosed(string reason, bool abortTransport)
    {
        lock (output.Gate)
        {
            if (abortTransport)
            {
                output.Abandon();
            }
            else
            {
                output.Complete(default);
            }
        }

        if (abortTransport)
        {
            connection.Abort(reason);
        }

        ThreadPool.UnsafeQueueUserWorkItem(static client => client.Cleanup(), this, preferLocal: false);
    }

    private void OnSlowConsumer()
    {
        // Counted only by the close that marks it (an adapter that writes its own output, such as MQTT's, may find the
        // same client too far behind at the same moment, and counts it in Close).
        var reason = ClosedState.SlowConsumerPendingBytes.ToText();
        if (!TryClose(reason))
        {
            return;
        }

        Interlocked.Increment(ref Server.Statistics.SlowConsumers);
        InProcessLog.SlowConsumer(logger, this, reason);
        EndClosed(reason, abortTransport: true);
    }

    /// <summary>Marks the client closed with a reason; false when it was closed already.</summary>
    private bool TryClose(string reason)
    {
        if (!TryMarkClosed())
        {
            return false;
        }

        // A transport that hit its write deadline aborted itself; nats-server reports that as a slow consumer.
        if (connection.CloseReason == SocketConnection.WriteDeadlineReason && reason == ClosedState.ClientClosed.ToText())
        {
            reason = SocketConnection.WriteDeadlineReason;
            Interlocked.Increment(ref Server.Statistics.SlowConsumers);
            InProcessLog.SlowConsumer(logger, this, reason);
        }

        Volatile.Write(ref closeReason, reason);
        return true;
    }

    /// <summary>Records a connection refused at connect: it never joined the connection list.</summary>
    private void CloseRefused(string reason)
    {
        TryClose(reason);
        lock (output.Gate)
        {
            output.Abandon();
        }

        closedAt.Stamp();
        Server.ClosedClients.Record(this, []);
        SignalClosed();
    }

    private void Cleanup()
    {
        var subscriptions = Server.ClosedClients.SubscriptionsToKeep(this);
        CloseSubscriptions();
        FailPendingRequests();
        closedAt.Stamp();
        Server.Unregister(this);
        Server.ClosedClients.Record(this, subscriptions);
        Server.Events?.ClientDisconnected(this);
        InProcessLog.ConnectionClosed(logger, this, ClosedReasonText);
        SignalClosed();
    }

    /// <summary>Cancels <see cref="Closed"/>, if anyone asked for it yet; its callbacks run on the thread pool.</summary>
    private void SignalClosed()
    {
        Interlocked.Exchange(ref signalled, 1);
        if (Volatile.Read(ref closed) is { } source)
        {
            _ = source.CancelAsync();
        }
    }
}
