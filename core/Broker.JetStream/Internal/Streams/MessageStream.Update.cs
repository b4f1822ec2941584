using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>Configuration updates, purges, message deletes, and pub acks that wait for durability.</summary>
internal sealed partial class MessageStream
{
    private readonly Lock durableGate = new();
    private readonly Queue<(ulong Sequence, byte[] Reply, bool Duplicate)> durableAcks = new();
    private bool durableWaiterRunning;

    /// <summary>Applies a validated configuration: store limits, subscriptions, pub-ack prefix.</summary>
    public void Update(StreamConfig updated)
    {
        lock (gate)
        {
            var resubscribe = !SameSubjects(config, updated) || config.AllowDirect != updated.AllowDirect;
            engine.Reserve(Medium, config.MaxBytes, -1);
            engine.Reserve(Medium, updated.MaxBytes, 1);
            Volatile.Write(ref config, updated);
            Store.UpdateConfig(StoreConfig(engine, updated, Created));
            if (resubscribe && !stopped)
            {
                Unsubscribe();
                Subscribe(updated);
            }
        }
    }

    /// <summary>Purges (nats-server <c>mset.purge</c>) and moves consumers past what was purged.</summary>
    public ulong Purge(string subject, ulong sequence, ulong keep)
    {
        var purged = subject.Length == 0 && sequence == 0 && keep == 0 ? Store.Purge() : Store.Purge(subject, sequence, keep);
        var state = Store.GetState();
        var first = state.FirstSequence;
        var filter = Encoding.UTF8.GetBytes(subject);
        if (subject.Length > 0)
        {
            var filtered = Store.GetFilteredState(state.FirstSequence, filter);
            first = filtered.Messages > 0 ? filtered.First : state.LastSequence + 1;
        }

        foreach (var consumer in ConsumersSnapshot)
        {
            if (subject.Length == 0 || consumer.MatchesFilter(filter))
            {
                consumer.OnPurged(first, state.LastSequence);
            }
        }

        return purged;
    }

    /// <summary>Removes one message, erasing its bytes unless <paramref name="noErase"/>.</summary>
    public bool DeleteMessage(ulong sequence, bool noErase) => Store.Remove(sequence, secureErase: !noErase);

    private static bool SameSubjects(StreamConfig a, StreamConfig b) =>
        (a.Subjects ?? []).SequenceEqual(b.Subjects ?? [], StringComparer.Ordinal);

    /// <summary>Holds a pub ack until the store reports the message durable; one wait serves every queued ack.</summary>
    private void QueueDurableAck(ReadOnlySpan<byte> reply, ulong sequence, bool duplicate)
    {
        lock (durableGate)
        {
            durableAcks.Enqueue((sequence, reply.ToArray(), duplicate));
            if (durableWaiterRunning)
            {
                return;
            }

            durableWaiterRunning = true;
        }

        _ = SendDurableAcksAsync();
    }

    private async Task SendDurableAcksAsync()
    {
        var buffer = new byte[pubAckPrefix.Length + 64];
        while (true)
        {
            ulong target;
            lock (durableGate)
            {
                if (durableAcks.Count == 0)
                {
                    durableWaiterRunning = false;
                    return;
                }

                target = durableAcks.Max(a => a.Sequence);
            }

            try
            {
                await Store.WaitForDurableAsync(target).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // A medium failure is logged; the publishers get no ack and retry, as after a lost ack.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                JetStreamLog.DurabilityFailed(engine.Logger, Name, ex);
                lock (durableGate)
                {
                    durableAcks.Clear();
                    durableWaiterRunning = false;
                }

                return;
            }

            var durable = Store.DurableSequence;
            while (true)
            {
                (ulong Sequence, byte[] Reply, bool Duplicate) next;
                lock (durableGate)
                {
                    if (!durableAcks.TryPeek(out next) || next.Sequence > durable)
                    {
                        break;
                    }

                    durableAcks.Dequeue();
                }

                var length = FormatAck(buffer, next.Sequence, next.Duplicate);
                Client.Publish(next.Reply, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(buffer, 0, length));
            }
        }
    }
}
