using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The server side of the leaf node listener's TLS (nats-server's <c>leafnodes.tls</c> and
/// <c>doTLSServerHandshake</c>), built when the hub starts: the hub's certificate, and with <c>verify</c> the roots a
/// spoke's certificate must chain to (<c>ca_file</c>, else the system's). The spoke starts the handshake after the
/// hub's INFO in clear text; it must finish within the timeout.
/// </summary>
/// <remarks>
/// The framework's <see cref="SslStream"/>, as <see cref="LeafTls"/> (the client side, whose certificate loading and
/// chain check this shares) and for the same reason: the TLS plugin secures the client port, the leaf node block's
/// <c>tls { }</c> is the core's own.
/// </remarks>
internal sealed class LeafHubTls
{
    // A spoke's certificate must allow client authentication when it restricts its key usage (as Go checks).
    private static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

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
            certificate = LeafTls.LoadCertificate(options.CertFile, options.KeyFile!);
        }

        if (!string.IsNullOrEmpty(options.CaFile))
        {
            roots = LeafTls.LoadRoots(options.CaFile);
        }
    }

    /// <summary>How long a spoke's handshake may take.</summary>
    public TimeSpan Timeout { get; }

    /// <summary>Whether spokes must present a certificate (<c>tls_verify</c> in the INFO).</summary>
    public bool Verify => verify;

    /// <summary>Shakes hands as the server over <paramref name="inner"/>, which the returned stream then owns.</summary>
    /// <exception cref="LeafLinkException">The handshake failed (the message says why) or timed out (<see cref="TimedOut"/>).</exception>
    public async Task<SslStream> AuthenticateAsync(Stream inner, CancellationToken stopping)
    {
        string? failure = null;
        var ssl = new SslStream(inner, leaveInnerStreamOpen: false);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(Timeout);
        try
        {
            if (certificate is null)
            {
                // Go's tls.Server without certificates fails every handshake.
                throw new AuthenticationException(failure = "tls: no certificates configured");
            }

            var options = new SslServerAuthenticationOptions
            {
                ServerCertificateContext = certificate,
                ClientCertificateRequired = verify,
                EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                AllowRenegotiation = false,
                RemoteCertificateValidationCallback = (_, presented, chain, errors) => Check(presented, chain, errors, out failure),
            };
            await ssl.AuthenticateAsServerAsync(options, timeout.Token).ConfigureAwait(false);
            return ssl;
        }
        catch (Exception ex) when (ex is AuthenticationException or IOException or OperationCanceledException or CryptographicException or InvalidOperationException)
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            stopping.ThrowIfCancellationRequested();
            throw new LeafLinkException(LeafLinkStage.Tls, ex is OperationCanceledException ? TimedOut : failure ?? ex.GetBaseException().Message);
        }
    }

    /// <summary>nats-server's log text for a handshake that did not finish in time.</summary>
    public const string TimedOut = "TLS handshake timeout";

    // Go's RequireAndVerifyClientCert with ClientCAs (nil: the system's roots), and its texts.
    private bool Check(X509Certificate? presented, X509Chain? chain, SslPolicyErrors errors, out string? failure)
    {
        failure = null;
        if (!verify)
        {
            return true;
        }

        if (presented is null)
        {
            failure = "tls: client didn't provide a certificate";
            return false;
        }

        using var spoke = new X509Certificate2(presented);
        var reason = roots is null
            ? ((errors & SslPolicyErrors.RemoteCertificateChainErrors) == 0 ? null : LeafTls.ChainFailure(chain))
            : LeafTls.VerifyChain(spoke, chain, roots, ClientAuthentication);
        failure = reason is null ? null : "tls: failed to verify client certificate: " + reason;
        return failure is null;
    }
}
