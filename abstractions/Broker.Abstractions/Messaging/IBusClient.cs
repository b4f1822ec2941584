using System.Buffers;

namespace Broker.Abstractions;

/// <summary>
/// An in-process client of the broker: it publishes and subscribes like a NATS connection, without a socket.
/// </summary>
/// <remarks>
/// <para>
/// Handlers: the broker copies each message for a client's handlers into a queue of that client (pooled buffers, no
/// allocation per message) and runs them on a thread-pool thread, one at a time per client, in the order the messages
/// reached the client (so messages of one producer keep their order on every subscription), never on the publisher's
/// thread and never while the broker holds a lock. A handler may therefore publish, subscribe, unsubscribe and request
/// through any client, its own included, without deadlock or recursion. Publishes a handler makes through its own
/// client are flushed when the handler's batch of messages ends; everything else is flushed when the call returns,
/// unless the client defers its flushes to <see cref="FlushAsync"/>.
/// </para>
/// <para>
/// A handler blocks its client's later messages while it runs. Blocking on a request (<c>RequestAsync(...).Result</c>)
/// works when another client or a NATS connection answers, since replies bypass the queue, but a request answered by a
/// handler of the same client cannot be served while the caller blocks and ends in <see cref="TimeoutException"/>:
/// await the request instead (continue in an async method the handler starts) or serve it from another client.
/// </para>
/// <para>The message's memory is reused once the handler returns: copy what you keep.</para>
/// <para>
/// Accounts (since contract 1.3): a client lives in one account (<see cref="Account"/>) and sees only that account's
/// subscriptions; its publishes reach only them.
/// </para>
/// <para>
/// Every client can also publish a message routed by one subject and delivered under another
/// (<see cref="IDeliverAsPublisher"/>), as JetStream delivers a stored message with the subject it was stored under.
/// </para>
/// </remarks>
public interface IBusClient : IAsyncDisposable, IDeliverAsPublisher
{
    /// <summary>Publishes a message.</summary>
    /// <param name="subject">The subject (UTF-8), a literal without wildcards.</param>
    /// <param name="replyTo">The reply subject (UTF-8), or empty.</param>
    /// <param name="headers">A NATS header block (<c>NATS/1.0\r\n...\r\n\r\n</c>), or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <exception cref="ArgumentException">The subject is not a valid literal subject.</exception>
    /// <exception cref="BusRefusedException">The client is bound to a user who may not publish there (<see cref="IBusConnection"/>).</exception>
    /// <exception cref="ObjectDisposedException">The client was disposed.</exception>
    void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload);

    /// <summary>Subscribes to a subject, optionally as a member of a queue group.</summary>
    /// <param name="subject">The subject; may contain <c>*</c> and <c>&gt;</c> wildcards.</param>
    /// <param name="queueGroup">The queue group, or <see langword="null"/>.</param>
    /// <param name="handler">Called for each message, one message at a time per client, on a thread-pool thread.</param>
    /// <returns>The subscription; dispose it to unsubscribe.</returns>
    /// <exception cref="ArgumentException">The subject or queue group is invalid.</exception>
    /// <exception cref="BusRefusedException">The client is bound to a user who may not subscribe there (<see cref="IBusConnection"/>).</exception>
    IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler);

    /// <summary>
    /// Subscribes as <see cref="Subscribe(string, string?, BusMessageHandler)"/> does, the messages going to
    /// <paramref name="receiver"/> (since contract 1.4). The broker's clients hold the receiver itself; the default
    /// implementation, for other clients, subscribes its <see cref="IBusMessageReceiver.Receive"/> as a handler.
    /// </summary>
    /// <param name="subject">The subject; may contain <c>*</c> and <c>&gt;</c> wildcards.</param>
    /// <param name="queueGroup">The queue group, or <see langword="null"/>.</param>
    /// <param name="receiver">Called for each message, one message at a time per client, on a thread-pool thread.</param>
    /// <returns>The subscription; dispose it to unsubscribe.</returns>
    /// <exception cref="ArgumentException">The subject or queue group is invalid.</exception>
    /// <exception cref="BusRefusedException">The client is bound to a user who may not subscribe there (<see cref="IBusConnection"/>).</exception>
    IBusSubscription Subscribe(string subject, string? queueGroup, IBusMessageReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        return Subscribe(subject, queueGroup, receiver.Receive);
    }

    /// <summary>
    /// Publishes a request with a fresh reply subject and waits for the first reply.
    /// </summary>
    /// <param name="subject">The subject.</param>
    /// <param name="headers">A NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="timeout">How long to wait for a reply.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A copy of the reply.</returns>
    /// <exception cref="NoRespondersException">No subscription matched the subject.</exception>
    /// <exception cref="TimeoutException">No reply arrived within <paramref name="timeout"/>.</exception>
    /// <exception cref="BusRefusedException">The client is bound to a user who may not publish the request or subscribe to the reply (<see cref="IBusConnection"/>).</exception>
    Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default);

    /// <summary>
    /// Ends the client's current batch: flushes every connection that received this client's publishes since the last
    /// flush, once. Needed only when publishes are deferred (<see cref="BusClientOptions.DeferFlush"/>,
    /// <see cref="BusConnectOptions.DeferFlush"/>), for example after a loop that delivered many messages. An
    /// <see cref="IBusConnection"/> also waits here (at most 10 ms) for connections far behind, as nats-server stalls fast
    /// producers; other clients never wait. Does nothing on a closed client.
    /// </summary>
    /// <param name="cancellationToken">Cancels the wait for far-behind connections.</param>
    /// <returns>A task that completes when the batch is flushed.</returns>
    ValueTask FlushAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// The name of the account the client is in (since contract 1.3): <see cref="BusClientOptions.Account"/> for a
    /// client of <see cref="IMessageBus.CreateClient"/>, the authenticated user's account (or
    /// <see cref="BusConnectOptions.Account"/>) for an <see cref="IBusConnection"/>; <c>$G</c>, the global account, when
    /// no accounts are configured. It does not change for the client's lifetime.
    /// </summary>
    string Account { get; }

    /// <summary>
    /// Whether at least one subscription (plain or in a queue group) of the client's own account matches
    /// <paramref name="subject"/> right now (since contract 1.3); subscriptions of other accounts never count.
    /// Thread-safe and cheap (the account's subject index caches matches); works on a closed client too.
    /// </summary>
    /// <param name="subject">A literal subject (UTF-8).</param>
    /// <returns>Whether someone in the account would receive a message published to it.</returns>
    bool HasInterest(ReadOnlySpan<byte> subject);
}
