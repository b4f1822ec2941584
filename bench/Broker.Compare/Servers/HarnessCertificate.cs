using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Compare.Servers;

/// <summary>
/// A self-signed server certificate made for one harness run (ECDSA P-256, SAN <c>localhost</c> and
/// <c>127.0.0.1</c>), written as PEM files into a private temporary directory that disposing deletes. Both servers
/// present it; the load generator pins it instead of validating a chain.
/// </summary>
internal sealed class HarnessCertificate : IDisposable
{
    /// <summary>Stands for <see cref="CertFile"/> in a row's server configuration.</summary>
    public const string CertFilePlaceholder = "{cert_file}";

    /// <summary>Stands for <see cref="KeyFile"/> in a row's server configuration.</summary>
    public const string KeyFilePlaceholder = "{key_file}";

    private readonly DirectoryInfo directory;

    private HarnessCertificate(DirectoryInfo directory, X509Certificate2 certificate)
    {
        this.directory = directory;
        Certificate = certificate;
    }

    /// <summary>The certificate without its private key (what clients pin).</summary>
    public X509Certificate2 Certificate { get; }

    /// <summary>The certificate, PEM.</summary>
    public string CertFile => Path.Combine(directory.FullName, "server-cert.pem");

    /// <summary>Its private key, PEM (PKCS#8), readable only by this user.</summary>
    public string KeyFile => Path.Combine(directory.FullName, "server-key.pem");

    /// <summary>Whether <paramref name="config"/> refers to the certificate's files.</summary>
    public static bool IsUsedBy(string config)
        => config.Contains(CertFilePlaceholder, StringComparison.Ordinal) || config.Contains(KeyFilePlaceholder, StringComparison.Ordinal);

    /// <summary><paramref name="config"/> with the placeholders replaced by this certificate's file paths.</summary>
    public string Substitute(string config)
        => config.Replace(CertFilePlaceholder, CertFile, StringComparison.Ordinal).Replace(KeyFilePlaceholder, KeyFile, StringComparison.Ordinal);

    public static HarnessCertificate Create()
    {
        // CreateTempSubdirectory makes the directory accessible to this user only, so the key is not exposed.
        var directory = Directory.CreateTempSubdirectory("broker-compare-tls-");
        try
        {
            using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
            var names = new SubjectAlternativeNameBuilder();
            names.AddDnsName("localhost");
            names.AddIpAddress(IPAddress.Loopback);
            request.CertificateExtensions.Add(names.Build());
            request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
            request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
            request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1", "Server Authentication")], critical: false));
            var now = DateTimeOffset.UtcNow;
            using var signed = request.CreateSelfSigned(now.AddDays(-1), now.AddDays(30));

            var certificate = new HarnessCertificate(directory, X509CertificateLoader.LoadCertificate(signed.RawData));
            File.WriteAllText(certificate.CertFile, signed.ExportCertificatePem());
            File.WriteAllText(certificate.KeyFile, key.ExportPkcs8PrivateKeyPem());
            return certificate;
        }
        catch
        {
            directory.Delete(recursive: true);
            throw;
        }
    }

    public void Dispose()
    {
        Certificate.Dispose();
        directory.Delete(recursive: true);
    }
}
