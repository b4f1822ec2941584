using System.Net;
using System.Runtime.CompilerServices;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The client side of a remote's TLS (nats-server's <c>leafNodeGetTLSConfigForSolicit</c> and
/// <c>doTLSClientHandshake</c>), built when the broker is: the certificate presented to a hub that verifies leaf
/// nodes, the roots the hub's certificate must chain to (<c>ca_file</c>, else the system's), <c>insecure</c>, the
/// handshake timeout. The hub's name is checked against the URL's host, or, for an IP address, against the first host
/// name among the configured URLs (nats-server's <c>tlsName</c>, forgotten when it does not match).
/// Routes use it on both sides (<see cref="ForRoutes"/>): the dialling member as the client, presenting its certificate,
/// and the accepting one as the server, requiring the member's certificate to chain to the same roots (nats-server's
/// <c>getTLSConfig</c> forces <c>RequireAndVerifyClientCert</c> and mirrors the roots into the client CAs).
/// </summary>
/// <remarks>
/// The framework's <see cref="SslStream"/> rather than the TLS plugin: the plugin's contract
/// (<c>IConnectionMiddleware</c>, <c>ITlsConnectionFeature</c>) secures accepted connections as the server, and a
/// remote's <c>tls { }</c> is the leaf node block's own (nested blocks stay with their owner, docs/plugins.md), so
/// a link the core dials does not depend on a plugin being loaded.
/// </remarks>
internal sealed class LinkTls
{
    // A hub's certificate must allow server authentication when it restricts its key usage, a client's certificate
    // client authentication (as Go checks).
    private static readonly Oid ServerAuthentication = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

    private readonly SslStreamCertificateContext? clientCertificate;
    private readonly X509Certificate2Collection? roots;
    private readonly bool insecure;
    private string? tlsName;

    private LinkTls(LeafRemoteTlsOptions? options, IEnumerable<Uri> urls)
    {
        Options = options;
        Configured = options is not null;
        Timeout = options is { Timeout.Ticks: > 0 } ? options.Timeout : LeafRemoteTlsOptions.DefaultTimeout;
        insecure = options?.Insecure ?? false;
        if (!string.IsNullOrEmpty(options?.CertFile))
        {
            clientCertificate = LoadCertificate(options.CertFile, options.KeyFile!);
        }

        if (!string.IsNullOrEmpty(options?.CaFile))
        {
            roots = LoadRoots(options.CaFile);
        }

        tlsName = urls.Select(u => u.IdnHost).FirstOrDefault(h => !IPAddress.TryParse(h, out _));
    }

    /// <summary>The options the files were read from (null without a <c>tls { }</c> block).</summary>
    public LeafRemoteTlsOptions? Options { get; }

    /// <summary>Whether the remote has a <c>tls { }</c> block: the link then always speaks TLS.</summary>
    public bool Configured { get; }

    /// <summary>How long a handshake may take.</summary>
    public TimeSpan Timeout { get; }

    /// <summary>The remote's TLS, its files read now.</summary>
    /// <exception cref="InvalidOperationException">A file cannot be read (nats-server's texts).</exception>
    public static LinkTls Create(LeafRemoteOptions options, IEnumerable<Uri> urls) => new(options.Tls, urls);

    /// <summary>The cluster's route TLS (<c>cluster.tls</c>), its files read now; <paramref name="routes"/> give the saved host name.</summary>
    /// <exception cref="InvalidOperationException">A file cannot be read (nats-server's texts).</exception>
    public static LinkTls ForRoutes(LeafRemoteTlsOptions options, IEnumerable<Uri> routes) => new(options, routes);

    /// <summary>
    /// Shakes hands as the server over <paramref name="inner"/> (an accepted route), which the returned stream then owns:
    /// our certificate is presented and the peer's is required and must chain to <c>ca_file</c> (else the system's
    /// roots) for client authentication. <c>insecure</c> does not apply here, as in Go.
    /// </summary>
    /// <exception cref="LinkException">The handshake failed or timed out; the message says why.</exception>
    public Task<SslStream> AuthenticateAsServerAsync(Stream inner, CancellationToken stopping)
        => AuthenticateAsServerAsync(inner, clientCertificate, roots, verifyClients: true, Timeout, "timeout", stopping);

    /// <summary>
    /// The server side for an accepted route (<paramref name="verifyClients"/> always) or leaf node spoke (with
    /// <c>verify</c>): <paramref name="certificate"/> presented (none configured fails every handshake, as Go's
    /// <c>tls.Server</c>), the peer's certificate required and chained to <paramref name="roots"/> (else the system's)
    /// for client authentication; <paramref name="timedOut"/> is the failure's text when <paramref name="timeout"/> passes.
    /// </summary>
    /// <exception cref="LinkException">The handshake failed or timed out; the message says why.</exception>
    internal static Task<SslStream> AuthenticateAsServerAsync(Stream inner, SslStreamCertificateContext? certificate, X509Certificate2Collection? roots, bool verifyClients, TimeSpan timeout, string timedOut, CancellationToken stopping)
    {
        var failure = new StrongBox<string?>();
        if (certificate is null)
        {
            failure.Value = "tls: no certificates configured";
            return ShakeHandsAsync(new SslStream(inner, leaveInnerStreamOpen: false), (_, _) => Task.FromException(new AuthenticationException(failure.Value)), failure, timeout, timedOut, stopping);
        }

        var options = new SslServerAuthenticationOptions
        {
            ServerCertificateContext = certificate,
            ClientCertificateRequired = verifyClients,
            EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            AllowRenegotiation = false,
            RemoteCertificateValidationCallback = (_, presented, chain, errors) => !verifyClients || CheckClient(presented, chain, errors, roots, out failure.Value),
        };
        return ShakeHandsAsync(new SslStream(inner, leaveInnerStreamOpen: false), (ssl, token) => ssl.AuthenticateAsServerAsync(options, token), failure, timeout, timedOut, stopping);
    }

    // One handshake within the timeout; a failure disposes the stream and says why (the check's text, else the error's).
    private static async Task<SslStream> ShakeHandsAsync(SslStream ssl, Func<SslStream, CancellationToken, Task> handshake, StrongBox<string?> failure, TimeSpan limit, string timedOut, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(limit);
        try
        {
            await handshake(ssl, timeout.Token).ConfigureAwait(false);
            return ssl;
        }
        catch (Exception ex) when (ex is AuthenticationException or IOException or OperationCanceledException or CryptographicException or InvalidOperationException)
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            stopping.ThrowIfCancellationRequested();
            throw new LinkException(LinkStage.Tls, ex is OperationCanceledException ? failure.Value ?? timedOut : failure.Value ?? RemoteAlert(ex.GetBaseException().Message));
        }
    }

    // OpenSSL's "...:sslv3 alert bad certificate" (the peer refused our certificate) in Go's words, "remote error: tls: bad certificate".
    private static string RemoteAlert(string message)
    {
        var at = message.IndexOf(" alert ", StringComparison.Ordinal);
        return at >= 0 && message.Contains("SSL routines", StringComparison.Ordinal) ? "remote error: tls: " + message[(at + " alert ".Length)..] : message;
    }

    // Go's verifyClientCertificate texts (Go 1.19, nats-server 2.9.10's).
    private static bool CheckClient(X509Certificate? presented, X509Chain? chain, SslPolicyErrors errors, X509Certificate2Collection? roots, out string? failure)
    {
        if (presented is null || (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0)
        {
            failure = "tls: client didn't provide a certificate";
            return false;
        }

        using var certificate = new X509Certificate2(presented);
        failure = Verify(certificate, chain, errors, roots, ClientAuthentication);
        if (failure is not null)
        {
            failure = "tls: failed to verify client certificate: " + failure;
        }

        return failure is null;
    }

    /// <summary>Shakes hands as the client over <paramref name="inner"/>, which the returned stream then owns.</summary>
    /// <exception cref="LinkException">The handshake failed or timed out; the message says why.</exception>
    public async Task<SslStream> AuthenticateAsync(Stream inner, Uri url, CancellationToken stopping)
    {
        var host = url.IdnHost;
        var name = tlsName;
        if (name is not null && IPAddress.TryParse(host, out _))
        {
            host = name;
        }

        var failure = new StrongBox<string?>();
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = host,
            ClientCertificateContext = clientCertificate,
            EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            RemoteCertificateValidationCallback = (_, certificate, chain, errors) => Check(certificate, chain, errors, host, out failure.Value),
        };
        try
        {
            return await ShakeHandsAsync(new SslStream(inner, leaveInnerStreamOpen: false), (ssl, token) => ssl.AuthenticateAsClientAsync(options, token), failure, Timeout, "timeout", stopping).ConfigureAwait(false);
        }
        catch (LinkException ex) when (ex.Message.StartsWith("x509: certificate is valid for", StringComparison.Ordinal) && host == name)
        {
            // nats-server issue 1256: a saved host name that does not match is not tried again.
            tlsName = null;
            throw;
        }
    }

    private bool Check(X509Certificate? presented, X509Chain? chain, SslPolicyErrors errors, string host, out string? failure)
    {
        failure = null;
        if (insecure)
        {
            return true;
        }

        if (presented is null || (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0)
        {
            failure = "the hub presented no certificate";
            return false;
        }

        using var certificate = new X509Certificate2(presented);
        if ((errors & SslPolicyErrors.RemoteCertificateNameMismatch) != 0)
        {
            failure = $"x509: certificate is valid for {Names(certificate)}, not {host}";
            return false;
        }

        failure = Verify(certificate, chain, errors, roots, ServerAuthentication);
        return failure is null;
    }

    // The chain to ca_file's roots (else the system's, as the framework checked), for the given key usage; null when it holds.
    private static string? Verify(X509Certificate2 certificate, X509Chain? chain, SslPolicyErrors errors, X509Certificate2Collection? roots, Oid usage)
    {
        if (roots is null)
        {
            return (errors & SslPolicyErrors.RemoteCertificateChainErrors) == 0 ? null : ChainFailure(chain);
        }

        return VerifyChain(certificate, chain, roots, usage);
    }

    /// <summary>
    /// Checks that <paramref name="certificate"/> chains to one of <paramref name="roots"/> (with the intermediates
    /// the peer sent along in <paramref name="chain"/>) and allows <paramref name="usage"/> when it restricts its key
    /// usage, as Go checks; null when it does, else Go's text of why not.
    /// </summary>
    internal static string? VerifyChain(X509Certificate2 certificate, X509Chain? chain, X509Certificate2Collection roots, Oid usage)
    {
        using var verifier = new X509Chain();
        verifier.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        verifier.ChainPolicy.CustomTrustStore.AddRange(roots);
        verifier.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        verifier.ChainPolicy.ApplicationPolicy.Add(usage);
        if (chain is not null)
        {
            foreach (var element in chain.ChainElements)
            {
                verifier.ChainPolicy.ExtraStore.Add(element.Certificate);
            }
        }

        return verifier.Build(certificate) ? null : ChainFailure(verifier);
    }

    /// <summary>Go's texts for the common cases of a chain that does not verify.</summary>
    internal static string ChainFailure(X509Chain? chain)
    {
        var status = chain?.ChainStatus ?? [];
        if (status.Any(s => s.Status is X509ChainStatusFlags.UntrustedRoot or X509ChainStatusFlags.PartialChain))
        {
            return "x509: certificate signed by unknown authority";
        }

        if (status.Any(s => s.Status is X509ChainStatusFlags.NotTimeValid))
        {
            return "x509: certificate has expired or is not yet valid";
        }

        return "x509: " + string.Join("; ", status.Select(s => s.StatusInformation.Trim()).Where(s => s.Length > 0).DefaultIfEmpty("certificate chain is not valid"));
    }

    private static string Names(X509Certificate2 certificate)
    {
        var names = certificate.Extensions.OfType<X509SubjectAlternativeNameExtension>()
            .SelectMany(e => e.EnumerateDnsNames().Concat(e.EnumerateIPAddresses().Select(a => a.ToString())))
            .ToList();
        return names.Count == 0 ? "no names" : string.Join(", ", names);
    }

    /// <summary>The certificate of <paramref name="certFile"/> with its key and the intermediates after it.</summary>
    /// <exception cref="InvalidOperationException">The pair cannot be read (nats-server's text).</exception>
    internal static SslStreamCertificateContext LoadCertificate(string certFile, string keyFile)
    {
        X509Certificate2 leaf;
        try
        {
            using var pem = X509Certificate2.CreateFromPemFile(certFile, keyFile);

            // A PEM key is ephemeral; a PKCS#12 round trip gives a key every platform's TLS stack accepts.
            leaf = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), password: null);
        }
        catch (Exception ex) when (ex is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new InvalidOperationException($"error parsing X509 certificate/key pair: {ex.Message}", ex);
        }

        var intermediates = new X509Certificate2Collection();
        intermediates.ImportFromPemFile(certFile);
        foreach (var cert in intermediates.Where(c => string.Equals(c.Thumbprint, leaf.Thumbprint, StringComparison.OrdinalIgnoreCase)).ToList())
        {
            intermediates.Remove(cert);
        }

        return SslStreamCertificateContext.Create(leaf, intermediates, offline: true);
    }

    /// <summary>The certificates of <paramref name="caFile"/>.</summary>
    /// <exception cref="InvalidOperationException">The file cannot be read or holds none (nats-server's texts).</exception>
    internal static X509Certificate2Collection LoadRoots(string caFile)
    {
        var collection = new X509Certificate2Collection();
        try
        {
            collection.ImportFromPemFile(caFile);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new InvalidOperationException(ex.Message, ex);
        }
        catch (CryptographicException ex)
        {
            throw new InvalidOperationException("failed to parse root ca certificate", ex);
        }

        return collection.Count == 0 ? throw new InvalidOperationException("failed to parse root ca certificate") : collection;
    }
}
