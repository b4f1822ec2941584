namespace Broker.Core;

/// <summary>
/// TLS of one leaf node remote (the <c>tls { }</c> block of a nats-server <c>leafnodes.remotes</c> entry): how the broker,
/// as the TLS client, checks the hub's certificate and which certificate it presents. A remote without it still
/// speaks TLS when the hub's INFO asks for it (or the URL is <c>wss://</c>), checking the hub against the system's
/// trusted roots, as nats-server 2.9.10 does.
/// </summary>
public sealed class LeafRemoteTlsOptions
{
    /// <summary>nats-server's <c>DEFAULT_LEAF_TLS_TIMEOUT</c>: 2 seconds.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(2);

    /// <summary>A PEM certificate (chain) presented to a hub that verifies its leaf nodes (<c>cert_file</c>). Default <see langword="null"/>: none.</summary>
    public string? CertFile { get; set; }

    /// <summary>The PEM private key of <see cref="CertFile"/> (<c>key_file</c>). Default <see langword="null"/>.</summary>
    public string? KeyFile { get; set; }

    /// <summary>
    /// PEM certificates the hub's certificate must chain to, instead of the system's trusted roots (<c>ca_file</c>).
    /// Default <see langword="null"/>: the system's roots.
    /// </summary>
    public string? CaFile { get; set; }

    /// <summary>
    /// Whether the hub's certificate is accepted without any check, of chain or name (<c>insecure</c>; for tests only).
    /// Default false.
    /// </summary>
    public bool Insecure { get; set; }

    /// <summary>How long the handshake may take (<c>timeout</c>). Default <see cref="DefaultTimeout"/> (2 seconds).</summary>
    public TimeSpan Timeout { get; set; } = DefaultTimeout;

    /// <summary>nats-server's <c>GenTLSConfig</c> checks: a certificate comes with its key.</summary>
    /// <exception cref="InvalidOperationException">One of the pair is missing; the message says which.</exception>
    internal void Validate() => CheckKeyPair(CertFile, KeyFile);

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public LeafRemoteTlsOptions Clone() => (LeafRemoteTlsOptions)MemberwiseClone();

    // nats-server's GenTLSConfig: a certificate and its key come together.
    internal static void CheckKeyPair(string? certFile, string? keyFile)
    {
        if (!string.IsNullOrEmpty(certFile) && string.IsNullOrEmpty(keyFile))
        {
            throw new InvalidOperationException("missing 'key_file' in TLS configuration");
        }

        if (string.IsNullOrEmpty(certFile) && !string.IsNullOrEmpty(keyFile))
        {
            throw new InvalidOperationException("missing 'cert_file' in TLS configuration");
        }
    }
}
