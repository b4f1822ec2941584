using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>The read loop: INFO, TLS when the listener asks for it, then parse everything that arrives until the connection ends.</summary>
internal sealed partial class NatsClient
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        // Counted whether admitted or not, as nats-server counts every client it creates.
        Interlocked.Increment(ref Server.Statistics.TotalConnections);
        try
        {
            // As nats-server: INFO first, then the place is taken; a refused client reads INFO and the -ERR.
            SendInfo();
            if (!Server.TryAdmit(this))
            {
                ClientLog.MaxConnectionsExceeded(logger, this);
                BeginClose(CloseReason.MaxConnectionsExceeded, ServerMessages.ErrMaxConnections);
                return;
            }

            // As nats-server: TLS starts after INFO, and the timers only once it is up (so the
            // authentication timer cannot fire during the handshake).
            if (!await StartTlsAsync(cancellationToken).ConfigureAwait(false))
            {
                return;
            }

            StartTimers();
            await ReadLoopAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            BeginClose(CloseReason.ServerShutdown, default);
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException)
        {
            // The transport failed under us (for example aborted while a read completed).
            ClientLog.ReadFailed(logger, this, ex);
            BeginClose(CloseReason.ReadError, default);
        }
        finally
        {
            BeginClose(CloseReason.ClientClosed, default);
            await CleanupAsync().ConfigureAwait(false);
        }
    }

    private async Task ReadLoopAsync(CancellationToken cancellationToken)
    {
        while (!IsClosed)
        {
            var input = transport.Input;
            var result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            keepAlive.InputReceived();

            var options = Server.Options;
            var limits = new ParserLimits(options.MaxControlLine, ClientLimits.MaxPayload(options, Account, claims.MaxPayload));
            var status = Parse(ref buffer, limits, out var error);
            var yielded = status == ParseStatus.Stopped && YieldRequested && !IsClosed;

            // One flush per batch for everything it produced: deliveries to subscribers and our own replies.
            FlushPending();
            if (Stalls.Count > 0)
            {
                await StallPolicy.WaitAsync(Stalls, cancellationToken).ConfigureAwait(false);
            }

            if (callout?.TakePending() is { } answer)
            {
                // CONNECT went to the authorization callout: what followed it waits for the answer.
                input.AdvanceTo(buffer.Start);
                callout.Complete(await answer.WaitAsync(cancellationToken).ConfigureAwait(false));
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

    /// <summary>Parses one read; tracing is chosen per read (a reload turning it on or off applies from the next).</summary>
    private ParseStatus Parse(ref System.Buffers.ReadOnlySequence<byte> buffer, in ParserLimits limits, out ProtocolError error)
    {
        if (trace.Enabled)
        {
            var traced = new TracingProtocolOps<Operations>(new Operations(this), trace);
            return ProtocolParser.Parse(ref traced, ref buffer, limits, scratch, out error);
        }

        var ops = new Operations(this);
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
                return !IsClosed;
            case Broker.Abstractions.TlsUpgradeResult.TlsRequired:
                ClientLog.TlsRequired(logger, this);
                BeginClose(CloseReason.TlsHandshakeError, ServerMessages.ErrSecureConnectionRequired);
                return false;
            default:
                BeginClose(CloseReason.TlsHandshakeError, default);
                return false;
        }
    }

    private void OnProtocolError(ProtocolError error)
    {
        ClientLog.ProtocolError(logger, this, error);
        BeginClose(CloseReasonText.ForProtocolError(error), ServerMessages.For(error));
    }

    /// <summary>The parser's view of this connection: direct calls into the handlers (traced by <see cref="TracingProtocolOps{TOps}"/>).</summary>
    private readonly struct Operations(NatsClient client) : IProtocolOps
    {
        public bool ConnectRequired => client.ConnectRequired;

        public bool HeadersEnabled => client.SupportsHeaders;

        public bool OnConnect(ReadOnlySpan<byte> json) => client.ProcessConnect(json);

        public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in System.Buffers.ReadOnlySequence<byte> payload) =>
            client.ProcessPublish(subject, replyTo, System.Buffers.ReadOnlySequence<byte>.Empty, payload);

        public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in System.Buffers.ReadOnlySequence<byte> headers, in System.Buffers.ReadOnlySequence<byte> payload) =>
            client.ProcessPublish(subject, replyTo, headers, payload);

        public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) => client.ProcessSubscribe(subject, queue, sid);

        public bool OnUnsub(ReadOnlySpan<byte> sid, long max) => client.ProcessUnsubscribe(sid, max);

        public bool OnPing() => client.ProcessPing();

        public bool OnPong() => client.ProcessPong();

        public bool OnErr(ReadOnlySpan<byte> message) => client.ProcessClientError(message);
    }
}
