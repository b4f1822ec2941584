using System.IO.Pipelines;
using Broker.Abstractions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// What waits to be sent, as the transport counts it over all its layers (<see cref="IPendingOutputFeature"/>): the
/// slow-consumer limit (max_pending), the layers' drain producers stall on, and the progress of a far-behind peer.
/// </summary>
internal sealed partial class ConnectionOutput
{
    /// <summary>
    /// Whether appending <paramref name="bytes"/> would leave more than max_pending waiting to be sent (the bytes the
    /// transport holds and those not yet passed to it): nats-server's <c>queueOutbound</c> check, made before the
    /// append, so a connection never holds more than max_pending; the caller then closes it as a slow consumer
    /// instead of appending. False without a byte count from the transport (the write deadline decides there).
    /// </summary>
    public bool WouldPassMaxPending(long bytes)
    {
        var limit = connection.Settings.MaxPendingOutputBytes;
        if (pendingAtCheck + (Written - writtenAtCheck) + bytes <= limit)
        {
            return false;
        }

        if (connection.Features.Get<IPendingOutputFeature>() is not { } pending)
        {
            return false;
        }

        pendingAtCheck = pending.PendingOutputBytes + headUsed;
        writtenAtCheck = Written;
        return pendingAtCheck + bytes > limit;
    }

    // A flush the pipe completed: the layers' drain to wait for, if any (LayersDrain).
    private Task? Taken(ValueTask<FlushResult> flush)
    {
        _ = flush.GetAwaiter().GetResult();
        return LayersDrain();
    }

    /// <summary>
    /// When the pipe took the flush but the connection's layers together hold three quarters of max_pending or more (a
    /// wrapper's buffer above the socket's, each pausing at three quarters of its own): their wait to drain to half, as
    /// a pipe resumes its writer; else null. Most flushes are judged by the bound <see cref="WouldPassMaxPending"/>
    /// keeps, without asking the transport.
    /// </summary>
    private Task? LayersDrain()
    {
        var limit = connection.Settings.MaxPendingOutputBytes;
        var stallAt = limit / 4 * 3;
        if (pendingAtCheck + (Written - writtenAtCheck) <= stallAt || connection.Features.Get<IPendingOutputFeature>() is not { } pending)
        {
            return null;
        }

        pendingAtCheck = pending.PendingOutputBytes + headUsed;
        writtenAtCheck = Written;
        return pendingAtCheck < stallAt ? null : pending.WhenPendingAtMost(limit / 2);
    }

    /// <summary>
    /// While producers stall on the layers' drain nothing more is flushed, but what they append is in the count
    /// (passed to the pipe with <c>Advance</c> when a head memory fills): the drain's target moves up by it, else a
    /// producer past the grace could append more than half of max_pending and the drain would never come. Asking
    /// again also has the layers look again, should one have missed its cue.
    /// </summary>
    private void RaiseLayersDrain()
    {
        var appended = writer.CanGetUnflushedBytes ? writer.UnflushedBytes : 0;
        _ = connection.Features.Get<IPendingOutputFeature>()?.WhenPendingAtMost(connection.Settings.MaxPendingOutputBytes / 2 + appended);
    }

    /// <summary>
    /// Milliseconds since the stalled peer last took a byte (or since the stall began): how producers treat it is
    /// decided by this (<see cref="StallPolicy"/>). Without a byte count from the transport, since the stall began.
    /// </summary>
    private long SinceProgress()
    {
        var now = Environment.TickCount64;
        if (Sent() is var sent && sent > sentAtProgress)
        {
            sentAtProgress = sent;
            progressAt = now;
        }

        return now - progressAt;
    }

    // What the transport has taken so far (TLS or WebSocket framing below may make it lag a little); 0 when it cannot say.
    private long Sent() => connection.Features.Get<IPendingOutputFeature>() is { } pending ? committed - pending.PendingOutputBytes : 0;

    /// <summary>
    /// Whether more than max_pending waits to be sent (nats-server closes such a client). Without a byte count from
    /// the transport, a stall that outlasts the write deadline counts as the limit.
    /// </summary>
    public bool IsBeyondMaxPending()
    {
        var settings = connection.Settings;
        if (connection.Features.Get<IPendingOutputFeature>() is { } pending)
        {
            return pending.PendingOutputBytes > settings.MaxPendingOutputBytes;
        }

        return settings.WriteDeadline > TimeSpan.Zero
            && Environment.TickCount64 - Volatile.Read(ref stalledSince) > (long)settings.WriteDeadline.TotalMilliseconds;
    }
}
