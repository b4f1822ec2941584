using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Abstractions;

/// <summary>
/// TLS on a connection, set by a TLS middleware under this interface type
/// (<c>Features.Set&lt;ITlsConnectionFeature&gt;(...)</c>). Its presence means the listener speaks TLS: either
/// the handshake already happened before the protocol started (<see cref="IsEstablished"/>), or the protocol must
/// call <see cref="UpgradeAsync"/> once it has sent its clear-text greeting, as NATS does after INFO.
/// </summary>
/// <remarks>
/// The NATS protocol handler reads it to fill INFO's <c>tls_required</c>, <c>tls_available</c> and
/// <c>tls_verify</c>, to upgrade after INFO, to default the authentication timeout to the handshake timeout plus one
/// second (as nats-server does when TLS is on), and to map a client certificate to a user (<c>verify_and_map</c>).
/// Monitoring reads <see cref="Protocol"/> and <see cref="CipherSuite"/> (/connz <c>tls_version</c>,
/// <c>tls_cipher_suite</c>).
/// </remarks>
public interface ITlsConnectionFeature
{
    /// <summary>Whether the TLS session is up: set by a handshake before the protocol started or by <see cref="UpgradeAsync"/>.</summary>
    bool IsEstablished { get; }

    /// <summary>Whether the handshake happened before the protocol's greeting (nats-server's <c>handshake_first</c>).</summary>
    bool HandshakeFirst { get; }

    /// <summary>
    /// Whether clients must use TLS (INFO <c>tls_required</c>). <see langword="false"/> when clear text is allowed too
    /// (nats-server's <c>allow_non_tls</c>, INFO <c>tls_available</c>).
    /// </summary>
    bool Required { get; }

    /// <summary>Whether clients must present a certificate signed by the configured CA (INFO <c>tls_verify</c>).</summary>
    bool ClientCertificateRequired { get; }

    /// <summary>
    /// Whether the client certificate names the user instead of CONNECT credentials (nats-server's
    /// <c>verify_and_map</c>). A connection without a certificate then cannot authenticate.
    /// </summary>
    bool MapClientCertificateToUser { get; }

    /// <summary>How long the handshake may take (nats-server's <c>tls.timeout</c>).</summary>
    TimeSpan HandshakeTimeout { get; }

    /// <summary>The negotiated protocol, or <see cref="SslProtocols.None"/> before the session is established.</summary>
    SslProtocols Protocol { get; }

    /// <summary>The negotiated cipher suite; meaningful only once <see cref="IsEstablished"/>.</summary>
    TlsCipherSuite CipherSuite { get; }

    /// <summary>The client's verified certificate, or <see langword="null"/> when it sent none.</summary>
    X509Certificate2? ClientCertificate { get; }

    /// <summary>
    /// Starts TLS on a connection whose protocol has sent its clear-text greeting. It waits for the client's first
    /// byte (at most <see cref="HandshakeTimeout"/>): a TLS record starts the handshake, anything else is left unread
    /// for the protocol. On <see cref="TlsUpgradeResult.Upgraded"/> the connection's
    /// <see cref="TransportConnection.Transport"/> has been replaced by the decrypted pipe, which the caller must use
    /// from then on.
    /// </summary>
    /// <param name="cancellationToken">Cancels the wait and the handshake.</param>
    /// <returns>What happened; see <see cref="TlsUpgradeResult"/>.</returns>
    /// <exception cref="InvalidOperationException">The session is already established.</exception>
    ValueTask<TlsUpgradeResult> UpgradeAsync(CancellationToken cancellationToken);
}

/// <summary>The outcome of <see cref="ITlsConnectionFeature.UpgradeAsync"/>.</summary>
public enum TlsUpgradeResult
{
    /// <summary>TLS is established; <see cref="TransportConnection.Transport"/> now carries the decrypted bytes.</summary>
    Upgraded,

    /// <summary>The client stays in clear text, which the listener allows; nothing it sent has been consumed.</summary>
    Plaintext,

    /// <summary>
    /// The client sent clear text, or nothing within the handshake timeout, but TLS is required. The transport is
    /// unchanged, so the protocol can still say so in clear text before closing.
    /// </summary>
    TlsRequired,

    /// <summary>The handshake started and failed (certificate refused, bad record, timeout); close without writing.</summary>
    Failed,
}
