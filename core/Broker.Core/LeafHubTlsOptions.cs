namespace Broker.Core;

/// <summary>
/// TLS on the leaf node listener (nats-server's <c>leafnodes { tls { } }</c>): the hub sends its first INFO in clear
/// text with <c>tls_required</c>, then the spoke starts the TLS handshake, which must finish within
/// <see cref="Timeout"/>; with <see cref="Verify"/> the spoke must present a certificate chaining to
/// <see cref="CaFile"/> (else the system's roots). Default: no TLS on the listener.
/// </summary>
public sealed class LeafHubTlsOptions
{
    /// <summary>The PEM certificate (chain) the hub presents (<c>cert_file</c>). Default <see langword="null"/>: none, so every handshake fails, as nats-server's.</summary>
    public string? CertFile { get; set; }

    /// <summary>The PEM private key of <see cref="CertFile"/> (<c>key_file</c>). Default <see langword="null"/>.</summary>
    public string? KeyFile { get; set; }

    /// <summary>
    /// PEM certificates a spoke's certificate must chain to when <see cref="Verify"/> is on (<c>ca_file</c>). Default
    /// <see langword="null"/>: the system's trusted roots.
    /// </summary>
    public string? CaFile { get; set; }

    /// <summary>Whether a spoke must present a certificate that verifies (<c>verify</c>). Default false: none is asked for.</summary>
    public bool Verify { get; set; }

    /// <summary>
    /// <c>insecure</c>: read for nats-server's warning only (it matters for dialling, which the listener does not do).
    /// Default false.
    /// </summary>
    public bool Insecure { get; set; }

    /// <summary>How long a spoke's TLS handshake may take (<c>timeout</c>). Default <see cref="LeafRemoteTlsOptions.DefaultTimeout"/> (2 seconds).</summary>
    public TimeSpan Timeout { get; set; } = LeafRemoteTlsOptions.DefaultTimeout;

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public LeafHubTlsOptions Clone() => (LeafHubTlsOptions)MemberwiseClone();

    /// <summary>Checks the files are given in pairs, with nats-server's texts (<c>GenTLSConfig</c>).</summary>
    /// <exception cref="InvalidOperationException">A certificate without its key, or a key without its certificate.</exception>
    public void Validate() => LeafRemoteTlsOptions.CheckKeyPair(CertFile, KeyFile);
}
