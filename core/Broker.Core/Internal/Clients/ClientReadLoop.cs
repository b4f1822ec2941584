using System.Buffers;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Broker.Core.Internal.Transport;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A NATS connection's read side, from start to end: INFO, admission, TLS when the listener asks for it, then parsing
/// everything that arrives (with the limits in force for each read: the account's and the user JWT's payload limit)
/// until the connection ends, one flush per read for what it produced; the parser calls the connection's handlers
/// directly (<see cref="Operations"/>, a struct: no interface dispatch per operation). It keeps no buffer of its own:
/// the parser's scratch for a control line that straddles two buffer segments is rented for a read that spans
/// segments and returned after it.
/// </summary>
internal sealed class ClientReadLoop
{
    private readonly NatsClient client;
    private readonly ClientTransport transport;
    private readonly KeepAlive keepAlive;
    private readonly ProtocolTrace trace;
    private readonly UserClaims claims;
    private readonly ILogger logger;

    public ClientReadLoop(NatsClient client, ClientTransport transport, KeepAlive keepAlive, ProtocolTrace trace, UserClaims claims, ILogger logger)
    {
        this.client = client;
        this.transport = transport;
        this.keepAlive = keepAlive;
        this.trace = trace;
        this.claims = claims;
        this.logger = logger;
    }

    /// <summary>Runs the connection until it ends, then cleans it up.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        // Counted whether admitted or not, as nats-server counts every client it creates.
        Interlocked.Increment(ref client.Server.Statistics.TotalConnections);
        try
        {
            // As nats-server: INFO first, then the place is taken; a refused client reads INFO and the -ERR.
            client.SendInfo();
            if (!client.Server.TryAdmit(client))
            {
                ClientLog.MaxConnectionsExceeded(logger, client);
                client.BeginClose(CloseReason.MaxConnectionsExceeded, ServerMessages.ErrMaxConnections);
                return;
            }

            // As nats-server: TLS starts after INFO, and the timers only once it is up (so the
            // authentication timer cannot fire during the handshake).
            if (!await StartTlsAsync(cancellationToken).ConfigureAwait(false))
            {
                return;
            }

            client.StartTimers();

            // The read loop is this method's own (not a second async method awaited from here): one state machine
            // per connection instead of two (issue 25). A return from it goes to the clean-up below.
            while (!client.IsClosed)
            {
                // The read waits without the stop token: a token registration per waiting read is 80 B per idle
                // connection, and a burst's registrations stay on the token's free list after it. The protocol handler
                // wakes every admitted client's read once when the token fires (NatsProtocolHandler).
                if (cancellationToken.IsCancellationRequested)
                {
                    client.BeginClose(CloseReason.ServerShutdown, default);
                    return;
                }

                var input = transport.Input;
                var result = await input.ReadAsync(CancellationToken.None).ConfigureAwait(false);
                if (result.IsCanceled && cancellationToken.IsCancellationRequested)
                {
                    input.AdvanceTo(result.Buffer.Start);
                    client.BeginClose(CloseReason.ServerShutdown, default);
                    return;
                }

                var buffer = result.Buffer;
                keepAlive.InputReceived();

                var options = client.Server.Options;
                var limits = new ParserLimits(options.MaxControlLine, ClientLimits.MaxPayload(options, client.Account, claims.MaxPayload));
                var status = Parse(ref buffer, limits, out var error);
                var yielded = status == ParseStatus.Stopped && client.YieldRequested && !client.IsClosed;

                // One flush per batch for everything it produced: deliveries to subscribers and our own replies.
                FlushBatch();
                if (client.HasStalls)
                {
                    await StallPolicy.WaitAsync(client.Stalls, cancellationToken).ConfigureAwait(false);
                }

                if (client.Callout is { } callout && callout.TakePending() is { } answer)
                {
                    // CONNECT went to the authorization callout: what followed it waits for the answer.
                    input.AdvanceTo(buffer.Start);
                    callout.Complete(await answer.WaitAsync(cancellationToken).ConfigureAwait(false));
                    await CompleteSettledConnectAsync(cancellationToken).ConfigureAwait(false);
                    continue;
                }

                if (client.TakeSettling() is { } settling)
                {
                    // CONNECT registered or changed its account: what followed it waits until the plugins applied that.
                    input.AdvanceTo(buffer.Start);
                    await CompleteConnectAsync(settling, cancellationToken).ConfigureAwait(false);
                    continue;
                }

                if (yielded)
                {
                    // A subscriber asked us to pause between messages: keep the rest of the input for the next batch.
                    input.AdvanceTo(buffer.Start);
                    continue;
                }

                if (status == ParseStatus.Error)
                {
                    input.AdvanceTo(buffer.Start);
                    OnProtocolError(error);
                    return;
                }

                if (status == ParseStatus.Stopped || result.IsCanceled)
                {
                    input.AdvanceTo(buffer.Start);
                    return;
                }

                input.AdvanceTo(buffer.Start, buffer.End);
                if (result.IsCompleted)
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            client.BeginClose(CloseReason.ServerShutdown, default);
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException)
        {
            // The transport failed under us (for example aborted while a read completed).
            ClientLog.ReadFailed(logger, client, ex);
            client.BeginClose(CloseReason.ReadError, default);
        }
        finally
        {
            client.BeginClose(CloseReason.ClientClosed, default);
            await client.CleanupAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Flushes what a read produced. The read loop holds no lock here, so a small batch for a connection may be sent
    /// by this thread itself (<see cref="SendLoopScheduler"/>) instead of waking a worker for one send.
    /// </summary>
    private void FlushBatch()
    {
        var outer = SendLoopScheduler.BeginBatch();
        try
        {
            client.FlushPending();
        }
        finally
        {
            SendLoopScheduler.EndBatch(outer);
        }
    }

    /// <summary>After a callout's answer: a CONNECT whose account the plugins are applying waits for them first.</summary>
    private Task CompleteSettledConnectAsync(CancellationToken cancellationToken)
        => client.TakeSettling() is { } settling ? CompleteConnectAsync(settling, cancellationToken) : Task.CompletedTask;

    /// <summary>
    /// Completes a CONNECT once the plugins' account watchers applied its account's change (at most
    /// <see cref="AccountDirectory.SettleLimit"/>, holding no lock nor thread), then flushes its +OK.
    /// </summary>
    private async Task CompleteConnectAsync(Task settling, CancellationToken cancellationToken)
    {
        await AccountDirectory.WaitAsync(settling, cancellationToken).ConfigureAwait(false);
        if (!client.IsClosed)
        {
            client.AcknowledgeConnect();
            client.FlushPending();
        }
    }

    /// <summary>
    /// Parses one read; tracing is chosen per read (a reload turning it on or off applies from the next). Only a read
    /// that spans segments can hold a control line split between them: the scratch it may need is rented for that
    /// read alone (the parser uses it synchronously), so an idle connection holds none (issue 25: it was 4 KiB, the
    /// largest part of an idle connection).
    /// </summary>
    private ParseStatus Parse(ref ReadOnlySequence<byte> buffer, in ParserLimits limits, out ProtocolError error)
    {
        if (buffer.IsSingleSegment)
        {
            return Parse(ref buffer, limits, [], out error);
        }

        var scratch = ArrayPool<byte>.Shared.Rent(limits.MaxControlLine + ProtocolParser.ControlLineAllowance + 2);
        try
        {
            return Parse(ref buffer, limits, scratch, out error);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(scratch);
        }
    }

    private ParseStatus Parse(ref ReadOnlySequence<byte> buffer, in ParserLimits limits, byte[] scratch, out ProtocolError error)
    {
        if (trace.Enabled)
        {
            var traced = new TracingProtocolOps<Operations>(new Operations(client), trace);
            return ProtocolParser.Parse(ref traced, ref buffer, limits, scratch, out error);
        }

        var ops = new Operations(client);
        return ProtocolParser.Parse(ref ops, ref buffer, limits, scratch, out error);
    }

    /// <summary>
    /// Starts TLS after INFO when the listener asks for it (<see cref="ClientTransport.StartTlsAsync"/>). Returns
    /// <see langword="false"/> when the connection was closed instead: a clear-text client on a TLS-only port gets
    /// <c>-ERR 'Secure Connection - TLS Required'</c> (nats-server sends it only when the handshake times out; we also
    /// say it when the client speaks clear text), a failed handshake is closed without writing.
    /// </summary>
    private async Task<bool> StartTlsAsync(CancellationToken cancellationToken)
    {
        switch (await transport.StartTlsAsync(cancellationToken).ConfigureAwait(false))
        {
            case Broker.Abstractions.TlsUpgradeResult.Upgraded:
            case Broker.Abstractions.TlsUpgradeResult.Plaintext:
                return !client.IsClosed;
            case Broker.Abstractions.TlsUpgradeResult.TlsRequired:
                ClientLog.TlsRequired(logger, client);
                client.BeginClose(CloseReason.TlsHandshakeError, ServerMessages.ErrSecureConnectionRequired);
                return false;
            default:
                client.BeginClose(CloseReason.TlsHandshakeError, default);
                return false;
        }
    }

    private void OnProtocolError(ProtocolError error)
    {
        ClientLog.ProtocolError(logger, client, error);
        client.BeginClose(CloseReasonText.ForProtocolError(error), ServerMessages.For(error));
    }

    /// <summary>The parser's view of this connection: direct calls into the handlers (traced by <see cref="TracingProtocolOps{TOps}"/>).</summary>
    private readonly struct Operations(NatsClient client) : IProtocolOps
    {
        public bool ConnectRequired => client.ConnectRequired;

        public bool HeadersEnabled => client.SupportsHeaders;

        public bool OnConnect(ReadOnlySpan<byte> json) => client.ProcessConnect(json);

        public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload) =>
            client.ProcessPublish(subject, replyTo, ReadOnlySequence<byte>.Empty, payload);

        public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
            client.ProcessPublish(subject, replyTo, headers, payload);

        public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) => client.ProcessSubscribe(subject, queue, sid);

        public bool OnUnsub(ReadOnlySpan<byte> sid, long max) => client.ProcessUnsubscribe(sid, max);

        public bool OnPing() => client.ProcessPing();

        public bool OnPong() => client.ProcessPong();

        public bool OnErr(ReadOnlySpan<byte> message) => client.ProcessClientError(message);
    }
}
