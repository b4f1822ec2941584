using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// Everything one listener needs for its handshakes, built once at startup from <see cref="TlsOptions"/>: the
/// server certificate with its chain, the CA that client certificates must chain to, the protocol and cipher
/// policy (nats-server <c>GenTLSConfig</c>).
/// </summary>
internal sealed class TlsListenerContext
{
    // TLS 1.3 suites are not configurable in Go; a cipher_suites list leaves them on, as nats-server does.
    private static readonly TlsCipherSuite[] Tls13Suites =
    [
        TlsCipherSuite.TLS_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
    ];

    // Client certificates must allow client authentication when they restrict their key usage (as Go checks).
    private static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

    private readonly SslStreamCertificateContext certificate;
    private readonly X509Certificate2Collection? trustedRoots;
    private readonly HashSet<string> pinned;
    private readonly CipherSuitesPolicy? cipherPolicy;

    public TlsListenerContext(string listenerName, TlsOptions options, bool nats)
    {
        ListenerName = listenerName;
        Options = options;

        // The upgrade after INFO is NATS's own; every other protocol (wss, https) starts with the handshake.
        UpgradeAfterGreeting = nats && !options.HandshakeFirst;
        HandshakeFirstFallback = nats && options.HandshakeFirst ? options.HandshakeFirstFallback : null;
        AllowPlaintext = nats && options.AllowNonTls;
        certificate = LoadServerCertificate(options);
        trustedRoots = options.CaFile is null ? null : LoadCertificates(options.CaFile, "ca_file");
        pinned = new HashSet<string>(options.PinnedCerts, StringComparer.OrdinalIgnoreCase);
        cipherPolicy = CreateCipherPolicy(options.CipherSuites);
    }

    public string ListenerName { get; }

    public TlsOptions Options { get; }

    /// <summary>NATS's default: INFO in clear text, then the client starts TLS.</summary>
    public bool UpgradeAfterGreeting { get; }

    /// <summary>NATS TLS-first with a fallback: how long to wait for a ClientHello before INFO in clear text.</summary>
    public TimeSpan? HandshakeFirstFallback { get; }

    /// <summary>Clients may stay in clear text (NATS <c>allow_non_tls</c>).</summary>
    public bool AllowPlaintext { get; }

    public SslServerAuthenticationOptions CreateAuthenticationOptions() => new()
    {
        ServerCertificateContext = certificate,
        ClientCertificateRequired = Options.Verify,
        EnabledSslProtocols = Options.MinVersion == SslProtocols.Tls13 ? SslProtocols.Tls13 : SslProtocols.Tls12 | SslProtocols.Tls13,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        AllowRenegotiation = false,
        CipherSuitesPolicy = cipherPolicy,
        RemoteCertificateValidationCallback = ValidateClientCertificate,
    };

    /// <summary>Whether a client certificate passes <c>pinned_certs</c> (any does when none are pinned).</summary>
    public bool IsPinned(X509Certificate2? client)
    {
        if (pinned.Count == 0)
        {
            return true;
        }

        if (client is null)
        {
            return false;
        }

        var digest = SHA256.HashData(client.PublicKey.ExportSubjectPublicKeyInfo());
        return pinned.Contains(Convert.ToHexString(digest));
    }

    private bool ValidateClientCertificate(object sender, X509Certificate? presented, X509Chain? chain, SslPolicyErrors errors)
    {
        if (presented is null)
        {
            return !Options.Verify;
        }

        if (trustedRoots is null)
        {
            // Not asked for and nothing to check it against (no ca_file): ignore it, as Go does without ClientCAs.
            return !Options.Verify;
        }

        using var client = new X509Certificate2(presented);
        using var verifier = new X509Chain();
        verifier.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        verifier.ChainPolicy.CustomTrustStore.AddRange(trustedRoots);
        verifier.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        verifier.ChainPolicy.ApplicationPolicy.Add(ClientAuthentication);
        if (chain is not null)
        {
            // Intermediates the client sent along.
            foreach (var element in chain.ChainElements)
            {
                verifier.ChainPolicy.ExtraStore.Add(element.Certificate);
            }
        }

        return verifier.Build(client);
    }

    private static SslStreamCertificateContext LoadServerCertificate(TlsOptions options)
    {
        X509Certificate2 leaf;
        try
        {
            using var pem = X509Certificate2.CreateFromPemFile(options.CertFile, options.KeyFile);

            // A PEM key is ephemeral; a PKCS#12 round trip gives a key every platform's TLS stack accepts.
            leaf = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), password: null);
        }
        catch (Exception ex) when (ex is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new InvalidOperationException(
                $"error parsing X509 certificate/key pair: cert_file \"{options.CertFile}\", key_file \"{options.KeyFile}\": {ex.Message}", ex);
        }

        var all = LoadCertificates(options.CertFile, "cert_file");
        var intermediates = new X509Certificate2Collection();
        foreach (var cert in all)
        {
            if (!string.Equals(cert.Thumbprint, leaf.Thumbprint, StringComparison.OrdinalIgnoreCase))
            {
                intermediates.Add(cert);
            }
        }

        return SslStreamCertificateContext.Create(leaf, intermediates, offline: true);
    }

    private static X509Certificate2Collection LoadCertificates(string path, string key)
    {
        var collection = new X509Certificate2Collection();
        try
        {
            collection.ImportFromPemFile(path);
        }
        catch (Exception ex) when (ex is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new InvalidOperationException($"failed to read {key} \"{path}\": {ex.Message}", ex);
        }

        if (collection.Count == 0)
        {
            throw new InvalidOperationException($"failed to parse {key} \"{path}\": no certificates found");
        }

        return collection;
    }

    private static CipherSuitesPolicy? CreateCipherPolicy(IList<string> names)
    {
        if (names.Count == 0)
        {
            return null;
        }

        var suites = new List<TlsCipherSuite>(Tls13Suites);
        foreach (var name in names)
        {
            if (!Enum.TryParse<TlsCipherSuite>(name, ignoreCase: false, out var suite) || !name.StartsWith("TLS_", StringComparison.Ordinal))
            {
                throw new InvalidOperationException($"unrecognized cipher {name}");
            }

            suites.Add(suite);
        }

        if (OperatingSystem.IsWindows())
        {
            throw new InvalidOperationException("cipher_suites: choosing cipher suites is not supported on Windows (.NET needs OpenSSL for it)");
        }

        return new CipherSuitesPolicy(suites.Distinct());
    }
}
