using System.Buffers;
using System.Globalization;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Events;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Streams a snapshot's archive to the requester's deliver subject as nats-server's <c>streamSnapshot</c> does: it
/// waits up to 2 s for interest there, sends chunks (128 KiB unless the request says otherwise) each with a reply
/// subject <c>$JS.SNAPSHOT.ACK.&lt;stream&gt;.&lt;id&gt;.&lt;size&gt;.&lt;index&gt;</c>, and once more than 8 MiB are
/// unacknowledged waits for an acknowledgement (up to 10 ms, as nats-server) before the next; it stops when the interest
/// goes, and always ends with an empty message.
/// </summary>
internal sealed class SnapshotSender(IBusClient client, ISubjectInterest? interest, string stream, string deliverSubject, int chunkSize) : IDisposable
{
    public const int DefaultChunkSize = 128 * 1024;
    private const long WindowSize = 8 * 1024 * 1024;

    private readonly SemaphoreSlim acknowledged = new(0, 1);
    private long outstanding;

    /// <summary>Sends the archive; returns the bytes sent. A failure reading it ends the transfer (with the empty message) and is thrown.</summary>
    public async Task<long> SendAsync(Stream archive, CancellationToken cancellationToken)
    {
        var deliver = Encoding.UTF8.GetBytes(deliverSubject);
        // nats-server goes on after its 2 s even when nobody listens; the chunks then go nowhere.
        await WaitForInterestAsync(deliver, cancellationToken).ConfigureAwait(false);

        var ackPrefix = "$JS.SNAPSHOT.ACK." + stream + "." + EventIds.Next();
        using var subscription = client.Subscribe(ackPrefix + ".>", null, OnAck);
        var chunk = new byte[chunkSize];
        long sent = 0;
        Exception? failure = null;
        for (var index = 1; ; index++)
        {
            int read;
            try
            {
                read = await archive.ReadAtLeastAsync(chunk, chunk.Length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // The writer's failure: the transfer ends as one, then the caller hears of it.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                failure = ex;
                break;
            }

            if (read == 0)
            {
                break;
            }

            if (Interlocked.Read(ref outstanding) > WindowSize)
            {
                await acknowledged.WaitAsync(TimeSpan.FromMilliseconds(10), cancellationToken).ConfigureAwait(false);
                if (interest is not null && !interest.HasInterest(deliver))
                {
                    break;
                }
            }

            var reply = Encoding.UTF8.GetBytes(ackPrefix + "." + read.ToString(CultureInfo.InvariantCulture) + "." + index.ToString(CultureInfo.InvariantCulture));
            Interlocked.Add(ref outstanding, read);
            client.Publish(deliver, reply, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(chunk, 0, read));
            sent += read;
            if (read < chunk.Length)
            {
                break;
            }
        }

        client.Publish(deliver, ReadOnlySpan<byte>.Empty, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty);
        await client.FlushAsync(cancellationToken).ConfigureAwait(false);
        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }

        return sent;
    }

    private async Task WaitForInterestAsync(byte[] deliver, CancellationToken cancellationToken)
    {
        var deadline = Environment.TickCount64 + 2000;
        while (interest is not null && !interest.HasInterest(deliver) && Environment.TickCount64 < deadline)
        {
            await Task.Delay(10, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>An acknowledgement: its subject's sixth token is the size of the chunk it acknowledges.</summary>
    private void OnAck(in BusMessage message)
    {
        var subject = message.Subject;
        var tokens = 0;
        var start = 0;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i == subject.Length || subject[i] == (byte)'.')
            {
                if (++tokens == 6)
                {
                    if (long.TryParse(subject[start..i], NumberStyles.None, CultureInfo.InvariantCulture, out var size)
                        && Interlocked.Add(ref outstanding, -size) < WindowSize && acknowledged.CurrentCount == 0)
                    {
                        try
                        {
                            acknowledged.Release();
                        }
                        catch (SemaphoreFullException)
                        {
                            // Another acknowledgement released it first.
                        }
                    }

                    return;
                }

                start = i + 1;
            }
        }
    }

    public void Dispose() => acknowledged.Dispose();
}
