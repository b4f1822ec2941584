using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>The read loop: INFO, TLS when the listener asks for it, then parse everything that arrives until the connection ends.</summary>
internal sealed partial class NatsClient
{
    private long lastInputAt = Environment.TickCount64;

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
            var result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            Volatile.Write(ref lastInputAt, Environment.TickCount64);

            var options = Server.Options;
            var limits = new ParserLimits(options.MaxControlLine, options.MaxPayload);
            var ops = new Operations(this);
            var status = ProtocolParser.Parse(ref ops, ref buffer, limits, scratch, out var error);
            var yielded = status == ParseStatus.Stopped && YieldRequested && !IsClosed;

            // One flush per batch for everything it produced: deliveries to subscribers and our own replies.
            FlushPending();
            if (Stalls.Count > 0)
            {
                await StallPolicy.WaitAsync(Stalls, cancellationToken).ConfigureAwait(false);
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

    private void OnProtocolError(ProtocolError error)
    {
        ClientLog.ProtocolError(logger, this, error);
        var reason = error switch
        {
            ProtocolError.MaxPayloadExceeded => CloseReason.MaxPayloadExceeded,
            ProtocolError.MaxControlLineExceeded => CloseReason.MaxControlLineExceeded,
            ProtocolError.AuthorizationViolation => CloseReason.AuthenticationViolation,
            _ => CloseReason.ParseError,
        };
        BeginClose(reason, ServerMessages.For(error));
    }

    /// <summary>The parser's view of this connection: direct calls into the handlers.</summary>
    private readonly struct Operations(NatsClient client) : IProtocolOps
    {
        public bool ConnectRequired => client.ConnectRequired;

        public bool HeadersEnabled => client.SupportsHeaders;

        // Tracing costs one field read per operation when it is off.
        public bool OnConnect(ReadOnlySpan<byte> json)
        {
            if (client.tracing)
            {
                client.TraceInConnect(json);
            }

            return client.ProcessConnect(json);
        }

        public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in System.Buffers.ReadOnlySequence<byte> payload)
        {
            if (client.tracing)
            {
                client.TraceInPublish(subject, replyTo, System.Buffers.ReadOnlySequence<byte>.Empty, payload, hpub: false);
            }

            return client.ProcessPublish(subject, replyTo, System.Buffers.ReadOnlySequence<byte>.Empty, payload);
        }

        public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in System.Buffers.ReadOnlySequence<byte> headers, in System.Buffers.ReadOnlySequence<byte> payload)
        {
            if (client.tracing)
            {
                client.TraceInPublish(subject, replyTo, headers, payload, hpub: true);
            }

            return client.ProcessPublish(subject, replyTo, headers, payload);
        }

        public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid)
        {
            if (client.tracing)
            {
                client.TraceInSubscribe(subject, queue, sid);
            }

            return client.ProcessSubscribe(subject, queue, sid);
        }

        public bool OnUnsub(ReadOnlySpan<byte> sid, long max)
        {
            if (client.tracing)
            {
                client.TraceInUnsubscribe(sid, max);
            }

            return client.ProcessUnsubscribe(sid, max);
        }

        public bool OnPing()
        {
            if (client.tracing)
            {
                client.TraceIn("PING");
            }

            return client.ProcessPing();
        }

        public bool OnPong()
        {
            if (client.tracing)
            {
                client.TraceIn("PONG");
            }

            return client.ProcessPong();
        }

        public bool OnErr(ReadOnlySpan<byte> message) => client.ProcessClientError(message);
    }
}
