using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Broker.TestKit;

/// <summary>
/// Certificates made once per test run with <see cref="CertificateRequest"/> and written as PEM to a temp folder:
/// a CA, a server certificate for 127.0.0.1 and localhost (RSA, so RSA cipher suites can be chosen), client
/// certificates naming users by subject, e-mail and DNS name, and a second CA nobody trusts with a client of its own.
/// </summary>
public sealed class TestCertificates
{
    private static readonly Lazy<TestCertificates> SharedInstance = new(() => new TestCertificates(), LazyThreadSafetyMode.ExecutionAndPublication);

    private TestCertificates()
    {
        Directory = Path.Combine(Path.GetTempPath(), "broker-tls-tests-" + Guid.NewGuid().ToString("N"));
        System.IO.Directory.CreateDirectory(Directory);
        AppDomain.CurrentDomain.ProcessExit += (_, _) => TryDelete(Directory);

        var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        Ca = CreateAuthority("CN=Broker Test CA, O=Broker Tests", caKey);
        var otherKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        UntrustedCa = CreateAuthority("CN=Untrusted CA, O=Elsewhere", otherKey);
        issuerKeys[Ca] = caKey;
        issuerKeys[UntrustedCa] = otherKey;

        var serverKey = RSA.Create(2048);
        var serverRequest = new CertificateRequest("CN=localhost, O=Broker Tests", serverKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var serverNames = new SubjectAlternativeNameBuilder();
        serverNames.AddDnsName("localhost");
        serverNames.AddIpAddress(IPAddress.Loopback);
        serverRequest.CertificateExtensions.Add(serverNames.Build());
        serverRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new("1.3.6.1.5.5.7.3.1")], false));
        Server = Sign(serverRequest, Ca).CopyWithPrivateKey(serverKey);

        // A cluster member's certificate: presented as the server and as the client of a route (nats-server checks both usages).
        var nodeKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var nodeRequest = new CertificateRequest("CN=node, O=Broker Tests", nodeKey, HashAlgorithmName.SHA256);
        var nodeNames = new SubjectAlternativeNameBuilder();
        nodeNames.AddDnsName("localhost");
        nodeNames.AddIpAddress(IPAddress.Loopback);
        nodeRequest.CertificateExtensions.Add(nodeNames.Build());
        nodeRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new("1.3.6.1.5.5.7.3.1"), new("1.3.6.1.5.5.7.3.2")], false));
        using (var node = Sign(nodeRequest, Ca))
        {
            NodeCertFile = WritePem("node.pem", node);
        }

        NodeKeyFile = WriteKey("node-key.pem", nodeKey.ExportPkcs8PrivateKeyPem());
        Alice = CreateClient("CN=alice, OU=eng, O=Acme", Ca, email: "alice@acme.test");
        Bob = CreateClient("CN=bob, O=Acme", Ca, dns: "bob.acme.test");
        Carol = CreateClient("CN=carol, O=Acme", Ca);
        Mallory = CreateClient("CN=alice, OU=eng, O=Acme", UntrustedCa);

        CaFile = WritePem("ca.pem", Ca);
        ServerCertFile = WritePem("server.pem", Server);
        ServerKeyFile = WriteKey("server-key.pem", serverKey.ExportPkcs8PrivateKeyPem());
        UntrustedCaFile = WritePem("untrusted-ca.pem", UntrustedCa);
        AliceCertFile = WritePem("alice.pem", Alice);
        AliceKeyFile = WriteKey("alice-key.pem", Alice.GetECDsaPrivateKey()!.ExportPkcs8PrivateKeyPem());
    }

    private static readonly Dictionary<X509Certificate2, ECDsa> issuerKeys = [];

    public static TestCertificates Shared => SharedInstance.Value;

    public string Directory { get; }

    public X509Certificate2 Ca { get; }

    public X509Certificate2 UntrustedCa { get; }

    public X509Certificate2 Server { get; }

    /// <summary>Subject <c>CN=alice,OU=eng,O=Acme</c>, e-mail SAN <c>alice@acme.test</c>.</summary>
    public X509Certificate2 Alice { get; }

    /// <summary>Subject <c>CN=bob,O=Acme</c>, DNS SAN <c>bob.acme.test</c>.</summary>
    public X509Certificate2 Bob { get; }

    /// <summary>Subject <c>CN=carol,O=Acme</c>, no SAN: maps to no configured user in the tests.</summary>
    public X509Certificate2 Carol { get; }

    /// <summary>Alice's subject, signed by the untrusted CA.</summary>
    public X509Certificate2 Mallory { get; }

    public string CaFile { get; }

    public string ServerCertFile { get; }

    public string ServerKeyFile { get; }

    /// <summary>The untrusted CA as PEM: nothing the broker's certificate chains to.</summary>
    public string UntrustedCaFile { get; }

    /// <summary>Alice's certificate as PEM (a TLS client's certificate, such as a leaf node spoke's).</summary>
    public string AliceCertFile { get; }

    /// <summary>Alice's private key as PEM (PKCS#8).</summary>
    public string AliceKeyFile { get; }

    /// <summary>A cluster member's certificate as PEM, signed by the test CA, naming localhost and 127.0.0.1, for server and client authentication.</summary>
    public string NodeCertFile { get; }

    /// <summary>The private key of <see cref="NodeCertFile"/> as PEM (PKCS#8).</summary>
    public string NodeKeyFile { get; }

    /// <summary>Validates the broker's certificate against the test CA, as a client configured with it would.</summary>
    public bool ValidateServer(X509Certificate2? certificate)
    {
        if (certificate is null)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(Ca);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        return chain.Build(certificate);
    }

    private static X509Certificate2 CreateAuthority(string subject, ECDsa key)
    {
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, false));
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
    }

    private static X509Certificate2 CreateClient(string subject, X509Certificate2 issuer, string? email = null, string? dns = null)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        if (email is not null || dns is not null)
        {
            var names = new SubjectAlternativeNameBuilder();
            if (email is not null)
            {
                names.AddEmailAddress(email);
            }

            if (dns is not null)
            {
                names.AddDnsName(dns);
            }

            request.CertificateExtensions.Add(names.Build());
        }

        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new("1.3.6.1.5.5.7.3.2")], false));
        using var signed = Sign(request, issuer);
        var withKey = signed.CopyWithPrivateKey(key);

        // Through PKCS#12 so SslStream can use the key as a client credential on every platform.
        return X509CertificateLoader.LoadPkcs12(withKey.Export(X509ContentType.Pkcs12), null);
    }

    private static X509Certificate2 Sign(CertificateRequest request, X509Certificate2 issuer)
    {
        var serial = new byte[12];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7F;
        return request.Create(issuer.SubjectName, X509SignatureGenerator.CreateForECDsa(issuerKeys[issuer]), DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30), serial);
    }

    private string WritePem(string name, X509Certificate2 certificate) => WriteKey(name, certificate.ExportCertificatePem());

    private string WriteKey(string name, string pem)
    {
        var path = Path.Combine(Directory, name);
        File.WriteAllText(path, pem + "\n");
        return path;
    }

    private static void TryDelete(string directory)
    {
        try
        {
            System.IO.Directory.Delete(directory, recursive: true);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
