using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// Reads a stream's messages for a get request: the API's <c>STREAM.MSG.GET</c> and direct get (<c>allow_direct</c>;
/// nats-server <c>processDirectGetRequest</c>), which answers with the stored message itself, with
/// <c>Nats-Stream</c>, <c>Nats-Subject</c>, <c>Nats-Sequence</c> and <c>Nats-Time-Stamp</c> headers added, sent to the
/// request's reply subject; failures are status messages (<c>404 Message Not Found</c>, <c>408 Bad Request</c>, ...).
/// 2.11's <c>batch</c> and <c>multi_last</c> requests go to <see cref="DirectGetBatch"/>.
/// Reads only; thread-safe as the store is. A mirror answers its origin's direct gets (<c>mirror_direct</c>) with one
/// whose <paramref name="subjectName"/> is the origin's name (the answers name the mirror, as nats-server's).
/// </summary>
internal sealed class DirectGet(IStreamStore store, IBusClient client, byte[] nameBytes, byte[]? subjectName = null)
{
    private DirectGetBatch? batches;

    /// <summary><c>$JS.API.DIRECT.GET.&lt;stream&gt;</c> with a get request as its body.</summary>
    public void OnRequest(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        if (message.Payload.IsEmpty)
        {
            SendStatus(message.ReplyTo, "NATS/1.0 408 Empty Request\r\n\r\n"u8);
            return;
        }

        MessageGetRequest? request;
        try
        {
            request = JsonSerializer.Deserialize(message.Payload.ToArray(), JetStreamJson.Context.MessageGetRequest);
        }
        catch (JsonException)
        {
            request = null;
        }

        if (request is null)
        {
            SendStatus(message.ReplyTo, "NATS/1.0 408 Malformed Request\r\n\r\n"u8);
            return;
        }

        var hasLast = !string.IsNullOrEmpty(request.LastBySubject);
        var hasNext = !string.IsNullOrEmpty(request.NextBySubject);
        var hasMulti = request.MultiLast is { Count: > 0 };
        if (request.Sequence == 0 && !hasLast && !hasNext && !hasMulti)
        {
            SendStatus(message.ReplyTo, "NATS/1.0 408 Empty Request\r\n\r\n"u8);
            return;
        }

        // nats-server 2.11's conflicting options (a batch is not for last_by_subj).
        if ((request.Sequence > 0 && hasLast) || (hasLast && hasNext) || (hasLast && request.Batch > 0) || (hasLast && hasMulti)
            || (hasNext && hasMulti) || (request.UpToSequence > 0 && request.UpToTime is not null))
        {
            SendStatus(message.ReplyTo, "NATS/1.0 408 Bad Request\r\n\r\n"u8);
            return;
        }

        if (hasMulti || request.Batch != 0)
        {
            batches ??= new DirectGetBatch(store, this);
            if (hasMulti)
            {
                batches.MultiLast(message.ReplyTo, request);
            }
            else
            {
                batches.Batch(message.ReplyTo, request);
            }

            return;
        }

        var stored = new StoredMessage();
        var status = Get(request, stored);
        ReplyWithMessage(message.ReplyTo, status, stored);
    }

    /// <summary><c>$JS.API.DIRECT.GET.&lt;stream&gt;.&lt;subject&gt;</c>: the last message of the subject; the body must be empty.</summary>
    public void OnLastBySubject(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        if (!message.Payload.IsEmpty)
        {
            SendStatus(message.ReplyTo, "NATS/1.0 408 Bad Request\r\n\r\n"u8);
            return;
        }

        // $JS.API.DIRECT.GET.<stream>.<subject...>
        var subject = message.Subject[("$JS.API.DIRECT.GET."u8.Length + (subjectName ?? nameBytes).Length + 1)..];
        var stored = new StoredMessage();
        ReplyWithMessage(message.ReplyTo, store.LoadLast(subject, stored), stored);
    }

    /// <summary>Loads what a get request asks for: by sequence, the next for a subject from a sequence, or the last for a subject.</summary>
    public LoadStatus Get(MessageGetRequest request, StoredMessage into)
    {
        if (!string.IsNullOrEmpty(request.NextBySubject))
        {
            return store.LoadNext(Encoding.UTF8.GetBytes(request.NextBySubject), request.Sequence, into, out _);
        }

        return request.Sequence > 0
            ? store.Load(request.Sequence, into)
            : store.LoadLast(Encoding.UTF8.GetBytes(request.LastBySubject ?? ""), into);
    }

    private void ReplyWithMessage(ReadOnlySpan<byte> reply, LoadStatus status, StoredMessage stored)
    {
        if (status != LoadStatus.Found)
        {
            SendStatus(reply, "NATS/1.0 404 Message Not Found\r\n\r\n"u8);
            return;
        }

        Send(reply, stored, counters: false, 0, 0);
    }

    /// <summary>
    /// Sends a stored message with the direct get headers; with <paramref name="counters"/>, a batch's
    /// <c>Nats-Num-Pending</c> and <c>Nats-Last-Sequence</c> too.
    /// </summary>
    public void Send(ReadOnlySpan<byte> reply, StoredMessage stored, bool counters, ulong pending, ulong last)
    {
        var headers = new ArrayBufferWriter<byte>(stored.Headers.Length + 220);
        var existing = stored.Headers.Span;
        headers.Write(existing.IsEmpty ? "NATS/1.0\r\n"u8 : existing[..^2]);
        NatsHeaders.WriteLine(headers, "Nats-Stream: "u8, nameBytes);
        NatsHeaders.WriteLine(headers, "Nats-Subject: "u8, stored.Subject.Span);
        Span<byte> number = stackalloc byte[40];
        Utf8Formatter.TryFormat(stored.Sequence, number, out var written);
        NatsHeaders.WriteLine(headers, "Nats-Sequence: "u8, number[..written]);
        NatsHeaders.WriteLine(headers, "Nats-Time-Stamp: "u8, number[..GoTime.Write(number, stored.Timestamp)]);
        if (counters)
        {
            Utf8Formatter.TryFormat(pending, number, out written);
            NatsHeaders.WriteLine(headers, "Nats-Num-Pending: "u8, number[..written]);
            Utf8Formatter.TryFormat(last, number, out written);
            NatsHeaders.WriteLine(headers, "Nats-Last-Sequence: "u8, number[..written]);
        }

        headers.Write("\r\n"u8);
        client.Publish(reply, default, new ReadOnlySequence<byte>(headers.WrittenMemory), new ReadOnlySequence<byte>(stored.Payload));
    }

    /// <summary>Sends a status message (no payload).</summary>
    public void SendStatus(ReadOnlySpan<byte> reply, ReadOnlySpan<byte> status) =>
        client.Publish(reply, default, new ReadOnlySequence<byte>(status.ToArray()), ReadOnlySequence<byte>.Empty);
}
