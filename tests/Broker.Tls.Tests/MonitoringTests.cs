using System.Net;
using System.Text.Json;
using Broker.TestKit;

namespace Broker.Tls.Tests;

/// <summary>The monitoring listener over HTTPS through the same middleware, and /connz showing each client's TLS session.</summary>
public sealed class MonitoringTests
{
    [Fact(Timeout = 30_000)]
    public async Task Https_monitoring_shows_the_tls_version_and_cipher_of_clients()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("listeners:0", "client"), ("listeners:1", "monitor")),
            options =>
            {
                options.Monitoring.Host = "127.0.0.1";
                options.Monitoring.Port = 0;
            });
        await using var client = await SecureClient.ConnectAsync(broker.Port);
        await client.SendAsync("CONNECT {\"verbose\":false,\"name\":\"secure-one\"}\r\nPING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());

        using var handler = new HttpClientHandler
        {
            ServerCertificateCustomValidationCallback = (_, certificate, _, _) => TestCertificates.Shared.ValidateServer(certificate),
        };
        using var http = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(10) };
        var monitor = (IPEndPoint)broker.Server.GetEndPoint("monitor");
        var json = await http.GetStringAsync(new Uri($"https://127.0.0.1:{monitor.Port}/connz"));

        using var connz = JsonDocument.Parse(json);
        var connection = connz.RootElement.GetProperty("connections").EnumerateArray().Single(c => c.GetProperty("name").GetString() == "secure-one");
        Assert.Equal(client.Ssl!.SslProtocol == System.Security.Authentication.SslProtocols.Tls13 ? "1.3" : "1.2", connection.GetProperty("tls_version").GetString());
        Assert.Equal(client.Ssl.NegotiatedCipherSuite.ToString(), connection.GetProperty("tls_cipher_suite").GetString());
        Assert.False(connection.TryGetProperty("tls_first", out _));
    }

    [Fact(Timeout = 30_000)]
    public async Task Plain_http_to_an_https_monitor_gets_no_answer()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("listeners:0", "monitor")),
            options =>
            {
                options.Monitoring.Host = "127.0.0.1";
                options.Monitoring.Port = 0;
            });
        var monitor = (IPEndPoint)broker.Server.GetEndPoint("monitor");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        await Assert.ThrowsAnyAsync<HttpRequestException>(() => http.GetStringAsync(new Uri($"http://127.0.0.1:{monitor.Port}/varz")));

        // The client port was not named, so it stays clear text.
        await using var raw = await RawClient.ConnectAsync(broker.Port);
        Assert.DoesNotContain("tls_required", raw.Info, StringComparison.Ordinal);
    }
}
