using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
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
    // Made with the first request: most clients (an adapter's connection among them) never make one; five fields of
    // their own were 40 B on every client (issue 25).
    private RequestState? requestState;

    public async Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        EnsureUsable();
        ArgumentNullException.ThrowIfNull(subject);
        var state = EnsureReplySubscription();
        var prefix = state.InboxPrefix!;
        var id = Interlocked.Increment(ref state.NextRequest);
        var request = new PendingRequest(subject);
        state.Add(id, request);
        try
        {
            var replyTo = new byte[prefix.Length + 20];
            prefix.CopyTo(replyTo, 0);
            Utf8Formatter.TryFormat(id, replyTo.AsSpan(prefix.Length), out var digits);

            // Flushed at once even from a handler, which may go on to block on the reply.
            var subjectBytes = Encoding.UTF8.GetBytes(subject);
            PublishCore(subjectBytes, subjectBytes, replyTo.AsSpan(0, prefix.Length + digits), new ReadOnlySequence<byte>(headers), new ReadOnlySequence<byte>(payload), flushNow: true);

            // A timeout is thrown once, with the subject, not caught and thrown again: 10,000 MQTT sessions leaving at
            // once queue as many consumer deletes, most of which outlive the adapter's timeout (issue 25).
            var waited = request.Task.WaitAsync(timeout, cancellationToken);
            await ((Task)waited).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (waited.IsFaulted && waited.Exception.InnerException is TimeoutException)
            {
                throw new TimeoutException("No reply to the request on '" + subject + "' within " + ((long)timeout.TotalMilliseconds).ToString(CultureInfo.InvariantCulture) + " ms.");
            }

            return await waited.ConfigureAwait(false);
        }
        finally
        {
            state.Remove(id);
        }
    }

    /// <summary>The prefix of this client's reply subjects, ending with a dot; made once, at the first request.</summary>
    protected virtual string NewInboxPrefix() => "_INBOX." + ServerIdentity.RandomBase32(22) + ".";

    private bool IsReplySubscription(Subscription subscription) => Volatile.Read(ref requestState) is { } state && ReferenceEquals(subscription, Volatile.Read(ref state.Replies));

    /// <summary>The request state with the reply subscription, subscribing <c>prefix.*</c> first if needed (again after a reload removed it).</summary>
    private RequestState EnsureReplySubscription()
    {
        var state = Volatile.Read(ref requestState) ?? Interlocked.CompareExchange(ref requestState, new RequestState(), null) ?? requestState;
        lock (state)
        {
            if (state.Replies is { Closed: false })
            {
                return state;
            }

            state.InboxPrefix ??= Encoding.ASCII.GetBytes(NewInboxPrefix());
            var subscription = CreateSubscription(Encoding.ASCII.GetString(state.InboxPrefix) + "*", null);
            AddChecked(subscription);
            Volatile.Write(ref state.Replies, subscription);
            return state;
        }
    }

    /// <summary>A reply (or the 503 no-responders status) for one of our requests; runs on the responder's thread.</summary>
    private void CompleteRequest(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var state = Volatile.Read(ref requestState);
        var prefix = state?.InboxPrefix;
        if (prefix is null
            || !subject.StartsWith(prefix)
            || !Utf8Parser.TryParse(subject[prefix.Length..], out long id, out var consumed)
            || consumed != subject.Length - prefix.Length
            || state!.Find(id) is not { } request)
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
        if (Volatile.Read(ref requestState) is not { } state)
        {
            return;
        }

        foreach (var request in state.Waiting())
        {
            request.TrySetException(new ObjectDisposedException(ToString(), ClosedMessage));
        }
    }

    /// <summary>The capacity of the map of requests waiting for a reply, 0 before the first request (tests read it).</summary>
    internal int PendingRequestCapacity => Volatile.Read(ref requestState)?.Capacity ?? 0;

    /// <summary>
    /// What requests need, made with the first: the reply subscription and its subjects' prefix (made under the
    /// object's own lock, docs/locks.md's InProcessClient.repliesLock) and the requests waiting for a reply, by number
    /// (under the map's own lock, a leaf).
    /// </summary>
    private sealed class RequestState
    {
        /// <summary>The capacity from which the map of waiting requests, a quarter full, is trimmed.</summary>
        private const int TrimFrom = 1024;

        // A concurrent dictionary never shrinks: the MQTT adapter's client, which asks the JetStream API for 10,000
        // sessions' consumers at once, kept its grown buckets after they left (issue 25). A map under a lock is trimmed
        // to twice what is left whenever it falls under a quarter (copies stay linear in the removals).
        private readonly Dictionary<long, PendingRequest> requests = [];
        public Subscription? Replies;
        public byte[]? InboxPrefix;
        public long NextRequest;

        public int Capacity
        {
            get
            {
                lock (requests)
                {
                    return requests.Capacity;
                }
            }
        }

        public void Add(long id, PendingRequest request)
        {
            lock (requests)
            {
                requests.Add(id, request);
            }
        }

        public PendingRequest? Find(long id)
        {
            lock (requests)
            {
                return requests.GetValueOrDefault(id);
            }
        }

        public void Remove(long id)
        {
            lock (requests)
            {
                requests.Remove(id);
                if (requests.Capacity >= TrimFrom && requests.Count < requests.Capacity / 4)
                {
                    requests.TrimExcess(requests.Count * 2);
                }
            }
        }

        /// <summary>The requests waiting now (to fail them outside the lock: their continuations run asynchronously anyway).</summary>
        public List<PendingRequest> Waiting()
        {
            lock (requests)
            {
                return [.. requests.Values];
            }
        }
    }

    private sealed class PendingRequest(string subject) : TaskCompletionSource<BusReply>(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        public string Subject { get; } = subject;
    }
}
