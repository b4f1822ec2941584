using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's publish acknowledgements: <c>{"stream":..,"seq":..}</c> (with <c>"domain"</c> and
/// <c>"duplicate":true</c> as they apply) or <c>{"error":..}</c>, sent to the publisher's reply subject once the store
/// says the message is durable. An ack the store cannot confirm yet waits in a queue that one task serves with one
/// durability wait for all of them. The ack is formatted into a per-thread buffer, so an ack sent at once allocates
/// nothing; a held ack's reply subject waits in a pooled array, returned once the ack is sent.
/// </summary>
/// <remarks><c>durableGate</c> (<i>leaf</i>) guards the queue of waiting acks.</remarks>
internal sealed class PubAckSender
{
    [ThreadStatic]
    private static byte[]? ackBuffer;

    private readonly IStreamStore store;
    private readonly IBusClient client;
    private readonly string name;
    private readonly ILogger logger;
    private readonly byte[] prefix;
    private readonly Lock durableGate = new();
    private readonly Queue<(ulong Sequence, byte[] Reply, int ReplyLength, bool Duplicate)> durableAcks = new();
    private bool durableWaiterRunning;

    // The highest sequence queued since the queue was last empty (a duplicate's ack names an older one).
    private ulong durableTarget;

    /// <param name="store">The stream's store, asked for durability.</param>
    /// <param name="client">The stream's bus client, which sends the acks.</param>
    /// <param name="name">The stream's name.</param>
    /// <param name="domain">The JetStream domain the acks name, or null.</param>
    /// <param name="logger">The JetStream log.</param>
    public PubAckSender(IStreamStore store, IBusClient client, string name, string? domain, ILogger logger)
    {
        this.store = store;
        this.client = client;
        this.name = name;
        this.logger = logger;
        // Quoted by hand rather than by the serializer context: a restart creates every stream's sender, and would
        // otherwise create the context (docs/benchmarks.md, "restart3").
        var text = string.IsNullOrEmpty(domain)
            ? "{\"stream\":" + StreamInfoJson.Quote(name) + ",\"seq\":"
            : "{\"stream\":" + StreamInfoJson.Quote(name) + ",\"domain\":" + StreamInfoJson.Quote(domain) + ",\"seq\":";
        prefix = Encoding.UTF8.GetBytes(text);
    }

    /// <summary>Sends the pub ack or the error, now when the message is durable, else when the store says it is.</summary>
    public void Respond(ReadOnlySpan<byte> reply, in IngestOutcome outcome)
    {
        if (outcome.Error is { } error)
        {
            client.Publish(reply, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(ErrorAck(error)));
            return;
        }

        if (outcome.Sequence > store.DurableSequence)
        {
            QueueDurableAck(reply, outcome.Sequence, outcome.Duplicate);
            return;
        }

        var buffer = ackBuffer ??= new byte[512];
        var length = FormatAck(buffer, outcome.Sequence, outcome.Duplicate);
        client.Publish(reply, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(buffer, 0, length));
    }

    /// <summary><c>{"stream":"S","seq":N}</c>, with <c>"duplicate":true</c> for a repeated message id; the length written.</summary>
    internal int FormatAck(byte[] buffer, ulong sequence, bool duplicate)
    {
        if (buffer.Length < prefix.Length + 40)
        {
            return FormatAck(ackBuffer = new byte[prefix.Length + 64], sequence, duplicate);
        }

        prefix.CopyTo(buffer, 0);
        var length = prefix.Length;
        Utf8Formatter.TryFormat(sequence, buffer.AsSpan(length), out var written);
        length += written;
        if (duplicate)
        {
            ",\"duplicate\":true"u8.CopyTo(buffer.AsSpan(length));
            length += 17;
        }

        buffer[length++] = (byte)'}';
        return length;
    }

    /// <summary><c>{"error":{..},"stream":"S","seq":0}</c>.</summary>
    internal byte[] ErrorAck(ApiError error)
    {
        var json = JsonSerializer.Serialize(error, JetStreamJson.Context.ApiError);
        return Encoding.UTF8.GetBytes("{\"error\":" + json + ",\"stream\":" + JsonSerializer.Serialize(name, JetStreamJson.Context.String) + ",\"seq\":0}");
    }

    /// <summary>Holds a pub ack until the store reports the message durable; one wait serves every queued ack.</summary>
    private void QueueDurableAck(ReadOnlySpan<byte> reply, ulong sequence, bool duplicate)
    {
        var copy = ArrayPool<byte>.Shared.Rent(reply.Length);
        reply.CopyTo(copy);
        lock (durableGate)
        {
            durableAcks.Enqueue((sequence, copy, reply.Length, duplicate));
            durableTarget = Math.Max(durableTarget, sequence);
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
        var buffer = new byte[prefix.Length + 64];
        while (true)
        {
            ulong target;
            lock (durableGate)
            {
                if (durableAcks.Count == 0)
                {
                    durableWaiterRunning = false;
                    durableTarget = 0;
                    return;
                }

                target = durableTarget;
            }

            try
            {
                await store.WaitForDurableAsync(target).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // A medium failure is logged; the publishers get no ack and retry, as after a lost ack.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                JetStreamLog.DurabilityFailed(logger, name, ex);
                lock (durableGate)
                {
                    foreach (var dropped in durableAcks)
                    {
                        ArrayPool<byte>.Shared.Return(dropped.Reply);
                    }

                    durableAcks.Clear();
                    durableWaiterRunning = false;
                    durableTarget = 0;
                }

                return;
            }

            var durable = store.DurableSequence;
            while (true)
            {
                (ulong Sequence, byte[] Reply, int ReplyLength, bool Duplicate) next;
                lock (durableGate)
                {
                    if (!durableAcks.TryPeek(out next) || next.Sequence > durable)
                    {
                        break;
                    }

                    durableAcks.Dequeue();
                }

                var length = FormatAck(buffer, next.Sequence, next.Duplicate);
                client.Publish(next.Reply.AsSpan(0, next.ReplyLength), default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(buffer, 0, length));
                ArrayPool<byte>.Shared.Return(next.Reply);
            }
        }
    }
}
