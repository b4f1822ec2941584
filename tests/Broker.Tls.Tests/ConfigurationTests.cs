using Broker.Abstractions;
using Broker.Adapters.Tls.Internal;
using Microsoft.Extensions.Configuration;

namespace Broker.Tls.Tests;

/// <summary>Bad <c>Plugins:Tls</c> settings stop the broker at startup with a message naming the problem.</summary>
public sealed class ConfigurationTests
{
    [Theory(Timeout = 30_000)]
    [InlineData("key_file", null, "Plugins:Tls: missing 'key_file' in tls config")]
    [InlineData("verify", "true", "Plugins:Tls:verify: 'verify' needs 'ca_file' to check client certificates against")]
    [InlineData("min_version", "1.1", "Plugins:Tls:min_version: unsupported TLS version: TLS 1.1")]
    [InlineData("timeout", "soon", "Plugins:Tls:timeout: time: invalid duration \"soon\"")]
    [InlineData("timeout", "0", "Plugins:Tls:timeout: must be positive")]
    [InlineData("verify", "maybe", "Plugins:Tls:verify: expected boolean value, but got 'maybe'")]
    [InlineData("pinned_certs:0", "abc", "Plugins:Tls:pinned_certs: error parsing tls config, 'pinned_certs' key abc does not look like hex-encoded sha256 of DER encoded SubjectPublicKeyInfo")]
    [InlineData("cert_fil", "x", "Plugins:Tls: unknown field \"cert_fil\"")]
    [InlineData("handshake_first", "sometimes", "Plugins:Tls:handshake_first: field \"handshake_first\" value \"sometimes\" is invalid")]
    [InlineData("handshake_first", "300", "Plugins:Tls:handshake_first: field \"handshake_first\" value \"300\" is invalid")]
    public async Task A_bad_setting_is_refused_at_startup(string key, string? value, string message)
    {
        var settings = TlsBroker.Settings((key, value));
        if (value is null)
        {
            settings.Remove(key);
        }

        var error = await Assert.ThrowsAsync<PluginConfigurationException>(() => TlsBroker.StartAsync(settings));
        Assert.Equal(message, error.Message);
    }

    [Fact(Timeout = 30_000)]
    public async Task An_unknown_cipher_suite_is_refused_at_startup()
    {
        var settings = TlsBroker.Settings(("cipher_suites:0", "TLS_NOT_A_SUITE"));
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => TlsBroker.StartAsync(settings));
        Assert.Contains("unrecognized cipher TLS_NOT_A_SUITE", error.Message, StringComparison.Ordinal);
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
            ["allow_non_tls"] = "yes",
            ["cipher_suites"] = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        }).Build();

        var options = TlsOptionsReader.ReadOptions(section);

        Assert.True(options.Verify);
        Assert.True(options.VerifyAndMap);
        Assert.Equal(TimeSpan.FromSeconds(1.5), options.Timeout);
        Assert.True(options.HandshakeFirst);
        Assert.Equal(TimeSpan.FromMilliseconds(50), options.HandshakeFirstFallback);
        Assert.True(options.AllowNonTls);
        Assert.Equal(2, options.CipherSuites.Count);
    }

    [Theory]
    [InlineData("500us", 5_000L, "1m30s", 900_000_000L)]
    [InlineData("2s500ms", 25_000_000L, "300ms", 3_000_000L)]
    [InlineData("3", 30_000_000L, "2us", 20L)]
    public void Durations_take_every_go_form_and_a_bare_timeout_is_seconds(string timeout, long timeoutTicks, string first, long fallbackTicks)
    {
        var section = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["cert_file"] = "c.pem",
            ["key_file"] = "k.pem",
            ["timeout"] = timeout,
            ["handshake_first"] = first,
        }).Build();

        var options = TlsOptionsReader.ReadOptions(section);

        Assert.Equal(TimeSpan.FromTicks(timeoutTicks), options.Timeout);
        Assert.True(options.HandshakeFirst);
        Assert.Equal(TimeSpan.FromTicks(fallbackTicks), options.HandshakeFirstFallback);
    }

    [Fact]
    public void An_unconfigured_section_turns_tls_off_an_empty_block_and_listeners_alone_are_refused()
    {
        var empty = new ConfigurationBuilder().Build();
        Assert.Null(TlsOptionsReader.Read(empty).Options);

        // An empty tls { } block in a configuration file arrives as the section's empty value.
        var emptyBlock = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["Plugins:Tls"] = "" }).Build();
        var refusal = Assert.Throws<PluginConfigurationException>(() => TlsOptionsReader.Read(emptyBlock.GetSection("Plugins:Tls")));
        Assert.Equal("Plugins:Tls: missing 'cert_file' in tls config", refusal.Message);
        Assert.Equal("Plugins:Tls", refusal.Key);

        var listenersOnly = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["listeners:0"] = "client" }).Build();
        Assert.Throws<PluginConfigurationException>(() => TlsOptionsReader.Read(listenersOnly));
    }
}
