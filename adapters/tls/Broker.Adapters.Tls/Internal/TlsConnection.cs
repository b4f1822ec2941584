using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// A connection secured by <see cref="SslStream"/> over another connection's pipe. Until the handshake it passes
/// the inner pipe through untouched (so NATS can send INFO in clear text); afterwards <see cref="Transport"/> is a
/// pair of pipes pumped through the TLS session (<c>.Pumps.cs</c>). It is also the connection's
/// <see cref="ITlsConnectionFeature"/> (<c>.Handshake.cs</c>).
/// </summary>
/// <remarks>
/// The decrypted output pipe is created with <see cref="TransportSettings.CreateOutputPipeOptions"/>, so a flush
/// completes synchronously until <see cref="TransportSettings.MaxPendingOutputBytes"/> of clear text wait behind a
/// peer that does not read: slow consumers are detected through TLS. What waits in it and what the inner transport
/// holds are counted together (the output is the connection's <see cref="IPendingOutputFeature"/> over the inner
/// one's), for the slow-consumer limit and for the broker's producer stall, which waits for both to drain.
/// </remarks>
internal sealed partial class TlsConnection : TransportConnection, ITlsConnectionFeature
{
    private readonly TransportConnection inner;
    private readonly TlsListenerContext context;
    private readonly ILogger logger;
    private SslStream? ssl;
    private Pipe? decryptedInput;
    private OutputBuffer? clearOutput;
    private Task pumps = Task.CompletedTask;
    private volatile bool established;

    public TlsConnection(TransportConnection inner, TlsListenerContext context, ILogger logger)
        : base(inner.Features)
    {
        this.inner = inner;
        this.context = context;
        this.logger = logger;
        Transport = inner.Transport;
        Features.Set<ITlsConnectionFeature>(this);
    }

    public override string ConnectionId => inner.ConnectionId;

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint => inner.LocalEndPoint;

    public override EndPoint? RemoteEndPoint => inner.RemoteEndPoint;

    public override TransportSettings Settings => inner.Settings;

    public override CancellationToken ConnectionClosed => inner.ConnectionClosed;

    public override string? CloseReason => inner.CloseReason;

    public bool IsEstablished => established;

    public bool HandshakeFirst { get; private set; }

    public bool Required => !context.AllowPlaintext;

    public bool ClientCertificateRequired => context.Options.Verify;

    public bool MapClientCertificateToUser => context.Options.VerifyAndMap;

    public TimeSpan HandshakeTimeout => context.Options.Timeout;

    public SslProtocols Protocol { get; private set; }

    public TlsCipherSuite CipherSuite { get; private set; }

    public X509Certificate2? ClientCertificate { get; private set; }

    public override void Abort(string reason)
    {
        inner.Abort(reason);

        // Let the pumps see the end even if nothing touches the pipes again.
        clearOutput?.Reader.CancelPendingRead();
        decryptedInput?.Writer.CancelPendingFlush();
    }

    public override async ValueTask DisposeAsync()
    {
        if (clearOutput is not null && decryptedInput is not null)
        {
            // Normally the protocol completed both already; completing again is harmless and ends the pumps if not.
            await clearOutput.Writer.CompleteAsync().ConfigureAwait(false);
            await decryptedInput.Reader.CompleteAsync().ConfigureAwait(false);
            await pumps.ConfigureAwait(false);
        }

        if (ssl is not null)
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
        }

        ClientCertificate?.Dispose();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
