namespace Broker.Abstractions;

/// <summary>
/// A bus client that stands for one connection of a protocol adapter (an MQTT client, a line-protocol client): opened by
/// <see cref="IMessageBus.ConnectAsync"/>, authenticated as a configured user whose permissions it obeys, listed in
/// <c>/connz</c> and counted in <c>/varz</c> like a NATS connection, and able to receive deliveries straight into the
/// connection's output with the same deferred flush, fast-producer stall and slow-consumer limit as a NATS connection.
/// </summary>
/// <remarks>
/// <para>
/// Everything <see cref="IBusClient"/> does works here too, checked against the user's permissions: a publish or
/// subscription the user may not make throws <see cref="BusRefusedException"/>; a request needs publish permission on
/// its subject and subscribe permission on <c>_INBOX.&gt;</c>, as for a NATS client.
/// </para>
/// <para>
/// Output: deliveries to subscriptions made with <see cref="Subscribe(string, string?, BusOutputHandler)"/> and the
/// adapter's own packets written with <see cref="WriteOutput{TState}"/> go, under one lock the broker holds, into
/// <c>Transport.Output</c> of the connection given to <see cref="IMessageBus.ConnectAsync"/>. The broker flushes that
/// output once per producer batch and watches what waits in it (<see cref="IPendingOutputFeature"/>): past three
/// quarters of <see cref="TransportSettings.MaxPendingOutputBytes"/> producers are stalled briefly, past all of it the
/// connection is closed as a slow consumer. The adapter must not write to <c>Transport.Output</c> by any other path.
/// </para>
/// <para>
/// Batches: with <see cref="BusConnectOptions.DeferFlush"/> the adapter ends each batch with
/// <see cref="IBusClient.FlushAsync"/> (after handling what one read of its connection brought), which also waits
/// briefly (at most 10 ms) for receivers far behind, as nats-server stalls fast producers.
/// </para>
/// <para>
/// Closing: the adapter disposes the client (reason <c>Client Closed</c>) or calls <see cref="Close"/> with its own
/// reason. The broker closes it on a slow consumer (it aborts the transport), when a configuration reload no longer
/// authenticates the user, removes the user or moves it to another account (since contract 1.3, <c>Client Closed</c>,
/// as nats-server), removes the account the adapter named, or lowers <c>max_connections</c> below the connections open
/// (the newest are closed), and in
/// lame duck mode or at shutdown (it completes the output, so what is buffered is sent
/// and the transport closes); <see cref="Closed"/> is cancelled then and <see cref="CloseReason"/> says why.
/// Operations on a closed client throw <see cref="ObjectDisposedException"/>.
/// </para>
/// </remarks>
public interface IBusConnection : IBusClient
{
    /// <summary>The connection id (<c>cid</c> in <c>/connz</c>), unique for the broker's lifetime.</summary>
    ulong ConnectionId { get; }

    /// <summary>The protocol name given at connect, shown as <c>type</c> in <c>/connz</c>.</summary>
    string Protocol { get; }

    /// <summary>The user the connection authenticated as, or <see langword="null"/> (token, anonymous).</summary>
    string? User { get; }

    /// <summary>Cancelled once the client is closed, by the adapter or by the broker.</summary>
    CancellationToken Closed { get; }

    /// <summary>Why the client closed (nats-server's closed-state text, such as <c>Slow Consumer (Pending Bytes)</c>), or <see langword="null"/> while open.</summary>
    string? CloseReason { get; }

    /// <summary>
    /// Subscribes with deliveries written into the connection's output: <paramref name="output"/> runs for each message
    /// on the producer's thread, under the output lock, and encodes it; the broker flushes at the end of the producer's
    /// batch. It must not block and must not call the bus (doing so throws <see cref="InvalidOperationException"/>);
    /// writing nothing skips the message (it is then not counted as sent).
    /// </summary>
    /// <param name="subject">The subject; may contain <c>*</c> and <c>&gt;</c> wildcards.</param>
    /// <param name="queueGroup">The queue group, or <see langword="null"/>.</param>
    /// <param name="output">Encodes one message into the output.</param>
    /// <returns>The subscription; dispose it to unsubscribe.</returns>
    /// <exception cref="ArgumentException">The subject or queue group is invalid.</exception>
    /// <exception cref="BusRefusedException">The user may not subscribe to the subject, or has too many subscriptions.</exception>
    /// <exception cref="ObjectDisposedException">The client is closed.</exception>
    IBusSubscription Subscribe(string subject, string? queueGroup, BusOutputHandler output);

    /// <summary>
    /// Publishes as <see cref="IBusClient.Publish(ReadOnlySpan{byte}, ReadOnlySpan{byte}, in System.Buffers.ReadOnlySequence{byte}, in System.Buffers.ReadOnlySequence{byte})"/>
    /// does and returns the subject the message was routed by: <paramref name="subject"/> itself, or where the subject
    /// mappings of the connection's account (nats-server's <c>mappings</c>) sent it, with a weighted mapping's pick for
    /// this publish. An adapter that also keeps what its client publishes under the subject (MQTT's QoS 1 and 2 and
    /// retained messages) keys it by the returned subject, as nats-server keeps them under the mapped one. Since contract 1.3.
    /// </summary>
    /// <param name="subject">The subject (UTF-8), a literal without wildcards.</param>
    /// <param name="replyTo">The reply subject (UTF-8), or empty.</param>
    /// <param name="headers">A NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <returns>The subject the message was routed and delivered by; valid until this connection's next publish.</returns>
    /// <exception cref="ArgumentException">The subject is not a valid literal subject.</exception>
    /// <exception cref="BusRefusedException">The user may not publish to the (mapped) subject.</exception>
    /// <exception cref="ObjectDisposedException">The client is closed.</exception>
    ReadOnlySpan<byte> PublishMapped(ReadOnlySpan<byte> subject, scoped ReadOnlySpan<byte> replyTo, scoped in System.Buffers.ReadOnlySequence<byte> headers, scoped in System.Buffers.ReadOnlySequence<byte> payload);

    /// <summary>
    /// Writes the adapter's own bytes (acknowledgements, keep-alive answers) into the connection's output, under the
    /// same lock as deliveries, so they never interleave with a delivery. Flushed at once, or by the next
    /// <see cref="IBusClient.FlushAsync"/> when <see cref="BusConnectOptions.DeferFlush"/> is set. <paramref name="write"/>
    /// must not call the bus.
    /// </summary>
    /// <typeparam name="TState">What <paramref name="write"/> needs; pass a static lambda and a struct to allocate nothing.</typeparam>
    /// <param name="state">Passed to <paramref name="write"/>.</param>
    /// <param name="write">Writes into the output.</param>
    /// <exception cref="ObjectDisposedException">The client is closed.</exception>
    void WriteOutput<TState>(TState state, BusOutputWriter<TState> write);

    /// <summary>
    /// Whether the user may receive a message on the literal <paramref name="subject"/>: its subscribe permissions,
    /// deny entries included, admit that subject. For messages the adapter delivers without the bus (MQTT retained
    /// messages), which the deny rules checked at delivery never see.
    /// </summary>
    /// <param name="subject">A subject without wildcards.</param>
    /// <returns><see langword="true"/> when the user has full permissions or may subscribe to the subject.</returns>
    bool MayReceive(string subject);

    /// <summary>
    /// Closes the client with a reason shown in <c>/connz</c> (nats-server's words where they fit, such as
    /// <c>Stale Connection</c> or <c>Protocol Violation</c>): its subscriptions are removed and it leaves the
    /// connection list. The transport is left to the adapter. Closing twice does nothing. An adapter that closes its
    /// client for being too far behind says <c>Slow Consumer (Pending Bytes)</c> (or <c>Slow Consumer (Write
    /// Deadline)</c>): the broker then counts it in <c>/varz</c> <c>slow_consumers</c> and logs it, as for NATS.
    /// </summary>
    /// <param name="reason">Why the connection closed.</param>
    void Close(string reason);
}
