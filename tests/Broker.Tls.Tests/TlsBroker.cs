using Broker.Adapters.Tls;
using Broker.Core;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;

namespace Broker.Tls.Tests;

/// <summary>Starts a <see cref="TestBroker"/> with the TLS plugin and <c>Plugins:Tls</c> settings.</summary>
public static class TlsBroker
{
    public static TestCertificates Certificates => TestCertificates.Shared;

    /// <summary>The server certificate and key, plus <paramref name="settings"/> (keys relative to <c>Plugins:Tls</c>).</summary>
    public static Dictionary<string, string?> Settings(params (string Key, string? Value)[] settings)
    {
        var all = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase)
        {
            ["cert_file"] = Certificates.ServerCertFile,
            ["key_file"] = Certificates.ServerKeyFile,
        };
        foreach (var (key, value) in settings)
        {
            all[key] = value;
        }

        return all;
    }

    public static Task<TestBroker> StartAsync(
        Dictionary<string, string?> tls,
        Action<BrokerOptions>? configure = null,
        IEnumerable<Broker.Abstractions.IBrokerPlugin>? extraPlugins = null)
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(tls.Select(p => new KeyValuePair<string, string?>("Plugins:Tls:" + p.Key, p.Value)))
            .Build();
        return TestBroker.StartAsync(configure, [new TlsPlugin(), .. extraPlugins ?? []], configuration);
    }
}
