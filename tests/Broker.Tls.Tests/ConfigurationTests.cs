using Broker.Adapters.Tls.Internal;
using Microsoft.Extensions.Configuration;

namespace Broker.Tls.Tests;

/// <summary>Bad <c>Plugins:Tls</c> settings stop the broker at startup with a message naming the problem.</summary>
public sealed class ConfigurationTests
{
    [Theory(Timeout = 30_000)]
    [InlineData("key_file", null, "missing 'key_file'")]
    [InlineData("verify", "true", "needs 'ca_file'")]
    [InlineData("min_version", "1.1", "unsupported TLS version")]
    [InlineData("cipher_suites:0", "TLS_NOT_A_SUITE", "unrecognized cipher TLS_NOT_A_SUITE")]
    [InlineData("timeout", "soon", "'timeout'")]
    [InlineData("verify", "maybe", "expected 'verify' to be a boolean")]
    [InlineData("pinned_certs:0", "abc", "pinned_certs")]
    [InlineData("cert_fil", "x", "unknown field \"cert_fil\"")]
    [InlineData("handshake_first", "sometimes", "handshake_first")]
    public async Task A_bad_setting_is_refused_at_startup(string key, string? value, string message)
    {
        var settings = TlsBroker.Settings((key, value));
        if (value is null)
        {
            settings.Remove(key);
        }

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => TlsBroker.StartAsync(settings));
        Assert.Contains(message, error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_missing_certificate_file_is_refused_at_startup()
    {
        var settings = TlsBroker.Settings(("cert_file", "/nonexistent/server.pem"));
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => TlsBroker.StartAsync(settings));
        Assert.Contains("Listener 'client' TLS", error.Message, StringComparison.Ordinal);
        Assert.Contains("/nonexistent/server.pem", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Nats_server_key_names_and_value_forms_are_read()
    {
        var section = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["cert_file"] = "c.pem",
            ["key_file"] = "k.pem",
            ["ca_file"] = "ca.pem",
            ["verify_and_map"] = "True",
            ["timeout"] = "1.5",
            ["handshake_first"] = "auto",
            ["allow_non_tls"] = "true",
            ["cipher_suites"] = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        }).Build();

        var options = TlsPluginSettings.ReadOptions(section, "test");

        Assert.True(options.Verify);
        Assert.True(options.VerifyAndMap);
        Assert.Equal(TimeSpan.FromSeconds(1.5), options.Timeout);
        Assert.True(options.HandshakeFirst);
        Assert.Equal(TimeSpan.FromMilliseconds(50), options.HandshakeFirstFallback);
        Assert.True(options.AllowNonTls);
        Assert.Equal(2, options.CipherSuites.Count);
    }

    [Fact]
    public void An_unconfigured_section_turns_tls_off_and_listeners_alone_are_refused()
    {
        var empty = new ConfigurationBuilder().Build();
        Assert.Null(TlsPluginSettings.Read(empty, "Plugins:Tls").Options);

        var listenersOnly = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["listeners:0"] = "client" }).Build();
        Assert.Throws<InvalidOperationException>(() => TlsPluginSettings.Read(listenersOnly, "Plugins:Tls"));
    }
}
