using System.Security.Authentication;

namespace Broker.Adapters.Tls;

/// <summary>
/// TLS settings of one listener, read from configuration with nats-server's <c>tls { }</c> key names (shown in
/// brackets): <c>Plugins:Tls</c> for the NATS client port (and any listener named in <c>Plugins:Tls:listeners</c>),
/// or the section a listener hands over in its middleware configuration (the WebSocket plugin's <c>tls</c> block).
/// </summary>
public sealed class TlsOptions
{
    /// <summary>The handshake timeout nats-server uses when none is set: 2 seconds.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(2);

    /// <summary>nats-server's wait for a TLS-first client before INFO with <c>handshake_first: auto</c>: 50 ms.</summary>
    public static readonly TimeSpan DefaultHandshakeFirstFallback = TimeSpan.FromMilliseconds(50);

    /// <summary>The server certificate, PEM, optionally followed by its intermediates [<c>cert_file</c>]. Required.</summary>
    public string CertFile { get; set; } = "";

    /// <summary>The server certificate's private key, PEM [<c>key_file</c>]. Required.</summary>
    public string KeyFile { get; set; } = "";

    /// <summary>
    /// CA certificates, PEM, that client certificates must chain to [<c>ca_file</c>]. Default none; required by
    /// <see cref="Verify"/>.
    /// </summary>
    public string? CaFile { get; set; }

    /// <summary>Whether clients must present a certificate signed by <see cref="CaFile"/> [<c>verify</c>]. Default <see langword="false"/>.</summary>
    public bool Verify { get; set; }

    /// <summary>
    /// Whether the client certificate also names the user (e-mail, DNS or URI subject alternative name, or the
    /// subject's distinguished name, looked up in the users list) [<c>verify_and_map</c>]. Implies <see cref="Verify"/>.
    /// Default <see langword="false"/>.
    /// </summary>
    public bool VerifyAndMap { get; set; }

    /// <summary>The lowest TLS version accepted, 1.2 or 1.3 [<c>min_version</c>]. Default 1.2.</summary>
    public SslProtocols MinVersion { get; set; } = SslProtocols.Tls12;

    /// <summary>
    /// TLS 1.2 cipher suites allowed, by IANA/Go name such as <c>TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256</c>
    /// [<c>cipher_suites</c>]. As in Go, TLS 1.3 suites stay enabled. Needs OpenSSL (Linux, macOS). Default: the
    /// platform's defaults.
    /// </summary>
    public IList<string> CipherSuites { get; set; } = [];

    /// <summary>How long the handshake may take [<c>timeout</c>, seconds or a duration]. Default 2 seconds.</summary>
    public TimeSpan Timeout { get; set; } = DefaultTimeout;

    /// <summary>
    /// NATS listeners: do the handshake before INFO instead of after it [<c>handshake_first</c>]. Default
    /// <see langword="false"/>. Other protocols always shake hands first.
    /// </summary>
    public bool HandshakeFirst { get; set; }

    /// <summary>
    /// With <see cref="HandshakeFirst"/>: how long to wait for a TLS-first client before sending INFO in clear text
    /// and falling back to the upgrade (<c>handshake_first: auto</c> is 50 ms, or give a duration). Default
    /// <see langword="null"/>: TLS-first only.
    /// </summary>
    public TimeSpan? HandshakeFirstFallback { get; set; }

    /// <summary>
    /// NATS listeners: let clients that do not start TLS stay in clear text (INFO <c>tls_available</c>)
    /// [<c>allow_non_tls</c>, a top-level key in nats-server]. Default <see langword="false"/>.
    /// </summary>
    public bool AllowNonTls { get; set; }

    /// <summary>
    /// Hex SHA-256 digests of the DER SubjectPublicKeyInfo of the only client certificates accepted
    /// [<c>pinned_certs</c>]. Default empty (any certificate the CA signed).
    /// </summary>
    public IList<string> PinnedCerts { get; set; } = [];
}
