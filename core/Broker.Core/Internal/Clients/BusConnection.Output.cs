using System.Buffers;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Deliveries into the adapter's connection: an output subscription's encoder writes each message into the
/// connection's <see cref="ConnectionOutput"/> on the producer's thread, under the output lock, and the producer
/// flushes once at the end of its batch, exactly as for a NATS connection. So the fast-producer stall and the
/// slow-consumer limit (max_pending) apply to adapter connections too, and the adapter allocates nothing per message.
/// </summary>
internal sealed partial class BusConnection
{
    public IBusSubscription Subscribe(string subject, string? queueGroup, BusOutputHandler output)
    {
        ArgumentNullException.ThrowIfNull(output);
        return SubscribeCore(subject, queueGroup, handler: null, output);
    }

    public override void Deliver(
        ClientBase producer,
        Subscription subscription,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload)
    {
        if (subscription.Output is not { } encode)
        {
            base.Deliver(producer, subscription, subject, replyTo, headers, payload);
            return;
        }

        bool slowConsumer;
        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            // As for a NATS client (nats-server's queueOutbound): a message that would pass max_pending is not
            // appended and the connection is closed as a slow consumer. The encoded size is known only after
            // encoding; the bytes the message carries stand for it.
            slowConsumer = output.WouldPassMaxPending(subject.Length + replyTo.Length + headers.Length + payload.Length);
            if (!slowConsumer && !Encode(producer, subscription, encode, new BusMessage(subject, replyTo, headers, payload)))
            {
                return;
            }
        }

        if (slowConsumer)
        {
            OnSlowConsumer();
            return;
        }

        producer.AddPendingFlush(this);
    }

    /// <summary>Runs an output subscription's encoder under the output lock; false when it wrote nothing.</summary>
    private bool Encode(ClientBase producer, Subscription subscription, BusOutputHandler encode, in BusMessage message)
    {
        var before = output.Written;
        BusThread.InOutputCallback = true;
        try
        {
            encode(message, output);
        }
#pragma warning disable CA1031 // A faulty encoder must not break delivery to the other subscribers of this message.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            InProcessLog.OutputHandlerFailed(logger, this, subscription.SubjectString, ex);
        }
        finally
        {
            BusThread.InOutputCallback = false;
        }

        var written = output.Written - before;
        if (written == 0)
        {
            // The adapter chose not to send this one (MQTT's no-local, a packet too large for the client).
            return false;
        }

        Interlocked.Increment(ref OutMessages);
        Interlocked.Add(ref OutBytes, message.Headers.Length + message.Payload.Length);
        if (output.AddUnflushed(written))
        {
            producer.RequestYield();
        }

        return true;
    }

    public void WriteOutput<TState>(TState state, BusOutputWriter<TState> write)
    {
        ArgumentNullException.ThrowIfNull(write);
        EnsureUsable();
        MarkActivity();
        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            BusThread.InOutputCallback = true;
            try
            {
                write(output, state);
            }
            finally
            {
                BusThread.InOutputCallback = false;
            }
        }

        lock (PublishLock)
        {
            AddPendingFlush(this);
            if (!DefersFlush)
            {
                EndBatch();
            }
        }
    }

    /// <summary>Ends a producer batch for this connection: its output, and its handler queue if it has handlers.</summary>
    public override Task? FlushOutput()
    {
        // No output made: nothing went through one (deliveries to handlers only, as MQTT's).
        var slowConsumer = false;
        var stall = Volatile.Read(ref lazyOutput)?.Flush(this, out slowConsumer);

        // What waits for the handlers (an adapter that writes its own output, such as MQTT's, from them) is output not
        // yet sent too: it counts towards max_pending with what the transport holds.
        if (slowConsumer || (QueuedBytes > 0 && PendingBytes > connection.Settings.MaxPendingOutputBytes))
        {
            OnSlowConsumer();
            return null;
        }

        return base.FlushOutput() ?? stall;
    }

    /// <summary>Ends the adapter's batch; unlike internal clients' it stalls on far-behind receivers, as a NATS connection's read loop does.</summary>
    public override ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        if (IsClosed)
        {
            return ValueTask.CompletedTask;
        }

        MarkActivity();
        List<Task>? stalls = null;
        lock (PublishLock)
        {
            FlushPending();
            if (HasStalls)
            {
                stalls = [.. Stalls];
                Stalls.Clear();
            }
        }

        return stalls is null ? ValueTask.CompletedTask : StallPolicy.WaitAsync(stalls, cancellationToken);
    }
}
