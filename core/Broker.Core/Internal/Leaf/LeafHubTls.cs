using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The server side of the leaf node listener's TLS (nats-server's <c>leafnodes.tls</c> and
/// <c>doTLSServerHandshake</c>), built when the hub starts: the hub's certificate, and with <c>verify</c> the roots a
/// spoke's certificate must chain to (<c>ca_file</c>, else the system's). The spoke starts the handshake after the
/// hub's INFO in clear text; it must finish within the timeout.
/// </summary>
/// <remarks>
/// The framework's <see cref="SslStream"/>, as <see cref="LinkTls"/> (the client side, whose certificate loading and
/// chain check this shares) and for the same reason: the TLS plugin secures the client port, the leaf node block's
/// <c>tls { }</c> is the core's own.
/// </remarks>
internal sealed class LeafHubTls
{
    private readonly SslStreamCertificateContext? certificate;
    private readonly X509Certificate2Collection? roots;
    private readonly bool verify;

    /// <summary>The listener's TLS, its files read now.</summary>
    /// <exception cref="InvalidOperationException">A file cannot be read (nats-server's texts).</exception>
    public LeafHubTls(LeafHubTlsOptions options)
    {
        verify = options.Verify;
        Timeout = options.Timeout.Ticks > 0 ? options.Timeout : LeafRemoteTlsOptions.DefaultTimeout;
        if (!string.IsNullOrEmpty(options.CertFile))
        {
            certificate = LinkTls.LoadCertificate(options.CertFile, options.KeyFile!);
        }

        if (!string.IsNullOrEmpty(options.CaFile))
        {
            roots = LinkTls.LoadRoots(options.CaFile);
        }
    }

    /// <summary>How long a spoke's handshake may take.</summary>
    public TimeSpan Timeout { get; }

    /// <summary>Whether spokes must present a certificate (<c>tls_verify</c> in the INFO).</summary>
    public bool Verify => verify;

    /// <summary>Shakes hands as the server over <paramref name="inner"/>, which the returned stream then owns (<see cref="LinkTls"/>'s server side).</summary>
    /// <exception cref="LinkException">The handshake failed (the message says why) or timed out (<see cref="TimedOut"/>).</exception>
    public Task<SslStream> AuthenticateAsync(Stream inner, CancellationToken stopping)
        => LinkTls.AuthenticateAsServerAsync(inner, certificate, roots, verify, Timeout, TimedOut, stopping);

    /// <summary>nats-server's log text for a handshake that did not finish in time.</summary>
    public const string TimedOut = "TLS handshake timeout";
}
