using System.Buffers;
using Broker.Abstractions;

namespace Broker.Core.Internal.Clients;

/// <summary>Request/reply over a one-shot inbox subscription.</summary>
internal sealed partial class InProcessClient
{
    public async Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(IsClosed, this);
        var inbox = "_INBOX." + ServerIdentity.RandomBase32(22);
        var reply = new TaskCompletionSource<BusReply>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var subscription = Subscribe(inbox, null, (in BusMessage message) =>
        {
            if (IsNoRespondersStatus(message.Headers))
            {
                reply.TrySetException(new NoRespondersException($"No responders are available for '{subject}'."));
                return;
            }

            reply.TrySetResult(new BusReply(
                System.Text.Encoding.UTF8.GetString(message.Subject),
                message.Headers.ToArray(),
                message.Payload.ToArray()));
        });
        subscription.AutoUnsubscribe(1);

        Publish(
            System.Text.Encoding.UTF8.GetBytes(subject),
            System.Text.Encoding.UTF8.GetBytes(inbox),
            new ReadOnlySequence<byte>(headers),
            new ReadOnlySequence<byte>(payload));

        try
        {
            return await reply.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"No reply to the request on '{subject}' within {timeout}.");
        }
    }

    private static bool IsNoRespondersStatus(in ReadOnlySequence<byte> headers)
    {
        if (headers.Length < 12)
        {
            return false;
        }

        Span<byte> start = stackalloc byte[12];
        headers.Slice(0, 12).CopyTo(start);
        return start.SequenceEqual("NATS/1.0 503"u8);
    }
}
