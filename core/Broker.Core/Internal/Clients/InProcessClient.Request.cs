using System.Buffers;
using System.Buffers.Text;
using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Request/reply over one reply subscription per client (<c>_INBOX.&lt;random&gt;.*</c>, as nats.net multiplexes its
/// requests): a request is the prefix plus a number, so requests neither add nor remove subscriptions (which would
/// invalidate every producer's match cache). Replies complete their request on the responder's thread instead of going
/// through the handler queue, so a handler that waits for a reply never waits behind itself.
/// </summary>
internal partial class InProcessClient
{
    // Made with the first request: most clients (an adapter's connection among them) never make one (issue 25).
    private Lock? repliesLock;
    // Created with the reply subscription, on the first request.
    private ConcurrentDictionary<long, PendingRequest>? requests;
    private Subscription? replies;
    private byte[]? inboxPrefix;
    private long nextRequest;

    public async Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        EnsureUsable();
        ArgumentNullException.ThrowIfNull(subject);
        var prefix = EnsureReplySubscription();
        var requests = this.requests!;
        var id = Interlocked.Increment(ref nextRequest);
        var request = new PendingRequest(subject);
        requests[id] = request;
        try
        {
            var replyTo = new byte[prefix.Length + 20];
            prefix.CopyTo(replyTo, 0);
            Utf8Formatter.TryFormat(id, replyTo.AsSpan(prefix.Length), out var digits);

            // Flushed at once even from a handler, which may go on to block on the reply.
            var subjectBytes = Encoding.UTF8.GetBytes(subject);
            PublishCore(subjectBytes, subjectBytes, replyTo.AsSpan(0, prefix.Length + digits), new ReadOnlySequence<byte>(headers), new ReadOnlySequence<byte>(payload), flushNow: true);
            return await request.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"No reply to the request on '{subject}' within {timeout}.");
        }
        finally
        {
            requests.TryRemove(id, out _);
        }
    }

    /// <summary>The prefix of this client's reply subjects, ending with a dot; made once, at the first request.</summary>
    protected virtual string NewInboxPrefix() => "_INBOX." + ServerIdentity.RandomBase32(22) + ".";

    private bool IsReplySubscription(Subscription subscription) => ReferenceEquals(subscription, Volatile.Read(ref replies));

    /// <summary>The reply subjects' prefix, subscribing <c>prefix.*</c> first if needed (again after a reload removed it).</summary>
    private byte[] EnsureReplySubscription()
    {
        var gate = Volatile.Read(ref repliesLock) ?? Interlocked.CompareExchange(ref repliesLock, new Lock(), null) ?? repliesLock;
        lock (gate)
        {
            if (replies is { Closed: false })
            {
                return inboxPrefix!;
            }

            inboxPrefix ??= Encoding.ASCII.GetBytes(NewInboxPrefix());
            requests ??= new ConcurrentDictionary<long, PendingRequest>();
            var subscription = CreateSubscription(Encoding.ASCII.GetString(inboxPrefix) + "*", null);
            AddChecked(subscription);
            Volatile.Write(ref replies, subscription);
            return inboxPrefix;
        }
    }

    /// <summary>A reply (or the 503 no-responders status) for one of our requests; runs on the responder's thread.</summary>
    private void CompleteRequest(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var prefix = inboxPrefix!;
        if (!subject.StartsWith(prefix)
            || !Utf8Parser.TryParse(subject[prefix.Length..], out long id, out var consumed)
            || consumed != subject.Length - prefix.Length
            || requests is null
            || !requests.TryGetValue(id, out var request))
        {
            // Not a number we handed out, or a late reply to a request that is over.
            return;
        }

        Interlocked.Increment(ref OutMessages);
        Interlocked.Add(ref OutBytes, headers.Length + payload.Length);
        if (NatsHeaderBlock.IsNoResponders(headers))
        {
            request.TrySetException(new NoRespondersException($"No responders are available for '{request.Subject}'."));
            return;
        }

        request.TrySetResult(new BusReply(Encoding.UTF8.GetString(subject), headers.ToArray(), payload.ToArray()));
    }

    /// <summary>Ends the requests still waiting (the client is closing).</summary>
    protected void FailPendingRequests()
    {
        if (requests is null)
        {
            return;
        }

        foreach (var (_, request) in requests)
        {
            request.TrySetException(new ObjectDisposedException(ToString(), ClosedMessage));
        }
    }

    private sealed class PendingRequest(string subject) : TaskCompletionSource<BusReply>(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        public string Subject { get; } = subject;
    }
}
