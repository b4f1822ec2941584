using System.Buffers;
using System.IO.Pipelines;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Broker.Abstractions;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// Starting TLS: before the protocol (TLS first, with nats-server's optional fallback delay) or after its greeting
/// (<see cref="UpgradeAsync"/>), deciding by the client's first byte like nats-server: 0x16 opens a TLS handshake
/// record; anything else is clear text.
/// </summary>
internal sealed partial class TlsConnection
{
    private const byte HandshakeRecord = 0x16;

    private enum FirstByte
    {
        Tls,
        ClearText,
        Nothing,
        Closed,
    }

    /// <summary>
    /// Runs when the connection is accepted. Protocols other than NATS, and NATS with <c>handshake_first</c>, shake
    /// hands now; with a fallback delay, a client that sends nothing in time is left for the upgrade after INFO.
    /// </summary>
    /// <returns><see langword="false"/> when the connection must be refused.</returns>
    public async Task<bool> StartAsync(CancellationToken cancellationToken)
    {
        if (context.UpgradeAfterGreeting)
        {
            return true;
        }

        if (context.HandshakeFirstFallback is { } fallback)
        {
            var first = await PeekAsync(fallback, cancellationToken).ConfigureAwait(false);
            if (first == FirstByte.Nothing)
            {
                return true;
            }

            if (first == FirstByte.Closed)
            {
                return false;
            }
        }

        HandshakeFirst = true;
        return await HandshakeAsync(cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<TlsUpgradeResult> UpgradeAsync(CancellationToken cancellationToken)
    {
        if (established)
        {
            throw new InvalidOperationException("TLS is already established on this connection.");
        }

        switch (await PeekAsync(HandshakeTimeout, cancellationToken).ConfigureAwait(false))
        {
            case FirstByte.Closed:
                return TlsUpgradeResult.Failed;
            case FirstByte.Nothing:
                TlsLog.HandshakeTimeout(logger, context.ListenerName, RemoteName);
                return Required ? TlsUpgradeResult.TlsRequired : TlsUpgradeResult.Plaintext;
            case FirstByte.ClearText:
                if (Required)
                {
                    TlsLog.ClearTextRefused(logger, context.ListenerName, RemoteName);
                    return TlsUpgradeResult.TlsRequired;
                }

                return TlsUpgradeResult.Plaintext;
            default:
                return await HandshakeAsync(cancellationToken).ConfigureAwait(false) ? TlsUpgradeResult.Upgraded : TlsUpgradeResult.Failed;
        }
    }

    private string RemoteName => RemoteEndPoint?.ToString() ?? "?";

    /// <summary>Waits for the first byte without consuming it, so whoever reads next still sees it.</summary>
    private async Task<FirstByte> PeekAsync(TimeSpan wait, CancellationToken cancellationToken)
    {
        var reader = inner.Transport.Input;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(wait);
        while (true)
        {
            ReadResult result;
            try
            {
                result = await reader.ReadAsync(timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return FirstByte.Nothing;
            }

            var buffer = result.Buffer;
            if (new SequenceReader<byte>(buffer).TryPeek(out var first))
            {
                reader.AdvanceTo(buffer.Start);
                return first == HandshakeRecord ? FirstByte.Tls : FirstByte.ClearText;
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted || result.IsCanceled)
            {
                return FirstByte.Closed;
            }
        }
    }

    private async Task<bool> HandshakeAsync(CancellationToken cancellationToken)
    {
        var raw = inner.Transport;
        var stream = new SslStream(new DuplexPipeStream(raw), leaveInnerStreamOpen: false);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(HandshakeTimeout);
        X509Certificate2? client = null;
        try
        {
            await stream.AuthenticateAsServerAsync(context.CreateAuthenticationOptions(), timeout.Token).ConfigureAwait(false);
            if (stream.RemoteCertificate is { } remote)
            {
                client = new X509Certificate2(remote);
            }

            if (!context.IsPinned(client))
            {
                TlsLog.NotPinned(logger, context.ListenerName, RemoteName, client?.Subject ?? "(none)");
                client?.Dispose();
                await stream.DisposeAsync().ConfigureAwait(false);
                return false;
            }
        }
        // A client that goes away mid-handshake can surface as OpenSSL's CryptographicException ("shutdown while in
        // init"): still the client's failure, not the broker's.
        catch (Exception ex) when (ex is AuthenticationException or IOException or OperationCanceledException or InvalidOperationException
            or System.Security.Cryptography.CryptographicException)
        {
            client?.Dispose();
            await stream.DisposeAsync().ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
            if (ex is OperationCanceledException)
            {
                TlsLog.HandshakeTimeout(logger, context.ListenerName, RemoteName);
            }
            else
            {
                TlsLog.HandshakeFailed(logger, context.ListenerName, RemoteName, ex.GetBaseException().Message);
            }

            return false;
        }

        ssl = stream;
        Protocol = stream.SslProtocol;
        CipherSuite = stream.NegotiatedCipherSuite;
        ClientCertificate = client;

        // Decrypted input runs the protocol's parser inline, as the socket transport does; output follows the
        // transport output contract so slow consumers are still caught.
        decryptedInput = new Pipe(new PipeOptions(
            readerScheduler: PipeScheduler.Inline,
            writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: 1024 * 1024,
            resumeWriterThreshold: 512 * 1024,
            useSynchronizationContext: false));
        // What waits here counts on top of what the socket below still holds (the shared feature bag has its count).
        clearOutput = new OutputBuffer(Settings, Features.Get<IPendingOutputFeature>());
        Features.Set<IPendingOutputFeature>(clearOutput);
        Transport = new DuplexPipe(decryptedInput.Reader, clearOutput.Writer);
        pumps = Task.WhenAll(ReceiveAsync(stream, raw.Input), SendAsync(stream, raw.Output));
        established = true;
        TlsLog.Established(logger, context.ListenerName, RemoteName, Protocol.ToString(), CipherSuite.ToString());
        return true;
    }
}
