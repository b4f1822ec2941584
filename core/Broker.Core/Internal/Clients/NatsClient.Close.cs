using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Closing: once, from whichever side notices first (read loop, timers, a producer seeing a slow consumer).
/// A graceful close sends the optional -ERR and everything buffered, then the transport closes; a slow consumer
/// is aborted at once without -ERR. The read loop then removes the client's subscriptions and registration.
/// </summary>
internal sealed partial class NatsClient
{
    private int closing;

    public CloseReason Reason { get; private set; }

    private CloseStamp closedAt;

    public DateTimeOffset? ClosedAt => closedAt.Read();

    public override bool IsClosed => Volatile.Read(ref closing) != 0;

    internal void BeginClose(CloseReason reason, ReadOnlySpan<byte> error)
    {
        if (Interlocked.Exchange(ref closing, 1) != 0)
        {
            return;
        }

        Reason = reason;
        if (trace.Enabled && !error.IsEmpty)
        {
            trace.TraceOutProtocol(error);
        }

        lock (output.Gate)
        {
            // Completing commits what is buffered; the transport sends it, then closes the socket.
            output.Complete(error);
        }

        transport.Input.CancelPendingRead();
    }

    private void OnSlowConsumer()
    {
        if (Interlocked.Exchange(ref closing, 1) != 0)
        {
            return;
        }

        Reason = CloseReason.SlowConsumerPendingBytes;
        Interlocked.Increment(ref Server.Statistics.SlowConsumers);
        ClientLog.SlowConsumer(logger, this, Reason.ToText());
        lock (output.Gate)
        {
            output.Abandon();
        }

        transport.Abort(Reason.ToText());
        transport.Input.CancelPendingRead();
    }

    internal async Task CleanupAsync()
    {
        authentication.Dispose();
        keepAlive.Dispose();
        claims.Dispose();
        callout?.Dispose();
        if (transport.CloseReason == SocketConnection.WriteDeadlineReason && Reason != CloseReason.SlowConsumerPendingBytes)
        {
            Reason = CloseReason.SlowConsumerWriteDeadline;
            Interlocked.Increment(ref Server.Statistics.SlowConsumers);
            ClientLog.SlowConsumer(logger, this, Reason.ToText());
        }

        var subscriptions = Server.ClosedClients.SubscriptionsToKeep(this);
        RemoveAllSubscriptions();
        closedAt.Stamp();
        Server.Unregister(this);
        Server.ClosedClients.Record(this, subscriptions);
        if (authentication.IsAuthenticated)
        {
            Server.Events?.ClientDisconnected(this);
        }

        await transport.Input.CompleteAsync().ConfigureAwait(false);
        ClientLog.ClientClosed(logger, this, Reason.ToText());
    }
}
