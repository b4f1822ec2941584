using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Broker.Abstractions;

namespace Broker.Bus.Tests;

/// <summary>
/// What a TLS middleware leaves on a connection whose listener says <c>verify_and_map</c> and whose client presented a
/// verified certificate; set on a probe connection before it connects to the bus.
/// </summary>
internal sealed class FakeTls(X509Certificate2? clientCertificate) : ITlsConnectionFeature
{
    public bool IsEstablished => true;

    public bool HandshakeFirst => true;

    public bool Required => true;

    public bool ClientCertificateRequired => true;

    public bool MapClientCertificateToUser => true;

    public TimeSpan HandshakeTimeout => TimeSpan.FromSeconds(2);

    public SslProtocols Protocol => SslProtocols.Tls13;

    public TlsCipherSuite CipherSuite => TlsCipherSuite.TLS_AES_128_GCM_SHA256;

    public X509Certificate2? ClientCertificate { get; } = clientCertificate;

    public ValueTask<TlsUpgradeResult> UpgradeAsync(CancellationToken cancellationToken) => throw new InvalidOperationException("Already established.");
}
