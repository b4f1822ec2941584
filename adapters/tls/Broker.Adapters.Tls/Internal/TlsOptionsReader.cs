using System.Security.Authentication;
using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// Reads <see cref="TlsOptions"/> from configuration with nats-server's key names through the contract's shared reader
/// (<see cref="ConfigurationValues"/>), refusing unknown keys and bad values with a
/// <see cref="PluginConfigurationException"/> naming the key, and the plugin-level <c>listeners</c> list.
/// </summary>
internal sealed class TlsOptionsReader
{
    private const string ListenersKey = "listeners";

    private static readonly string[] Keys =
    [
        "cert_file", "key_file", "ca_file", "verify", "verify_and_map", "min_version", "cipher_suites", "timeout",
        "handshake_first", "first", "immediate", "allow_non_tls", "pinned_certs",
    ];

    private TlsOptionsReader(TlsOptions? options, IReadOnlyList<string> listeners)
    {
        Options = options;
        Listeners = listeners;
    }

    /// <summary>The root options, or <see langword="null"/> when the section configures no TLS.</summary>
    public TlsOptions? Options { get; }

    /// <summary>Listeners the root options secure (default: the NATS client port).</summary>
    public IReadOnlyList<string> Listeners { get; }

    /// <summary>
    /// Reads the plugin's section. No section is no TLS; an empty one (an empty <c>tls { }</c> block in a
    /// configuration file) is refused, as nats-server refuses it.
    /// </summary>
    /// <exception cref="PluginConfigurationException">A key is unknown or a value is invalid; the message names it.</exception>
    public static TlsOptionsReader Read(IConfiguration section)
    {
        var listeners = section.GetList(ListenersKey);
        var hasSettings = section.GetChildren().Any(c => !string.Equals(c.Key, ListenersKey, StringComparison.OrdinalIgnoreCase));
        var givenEmpty = section is IConfigurationSection { Value: not null } && !section.GetChildren().Any();
        if (!hasSettings && !givenEmpty)
        {
            if (listeners.Count > 0)
            {
                throw section.Refuse(null, "listeners are named but no TLS settings (cert_file, key_file) are given");
            }

            return new TlsOptionsReader(null, []);
        }

        return new TlsOptionsReader(ReadOptions(section, allowListeners: true), listeners.Count > 0 ? listeners : ["client"]);
    }

    /// <summary>Reads one <c>tls { }</c> block (the plugin's section, or one a listener hands over).</summary>
    /// <exception cref="PluginConfigurationException">A key is unknown or a value is invalid; the message names it.</exception>
    public static TlsOptions ReadOptions(IConfiguration section, bool allowListeners = false)
    {
        section.RejectUnknownKeys(allowListeners ? [.. Keys, ListenersKey] : Keys);
        var options = new TlsOptions
        {
            CertFile = section["cert_file"] ?? "",
            KeyFile = section["key_file"] ?? "",
            CaFile = section["ca_file"],
            Verify = section.GetBool("verify", false),
            VerifyAndMap = section.GetBool("verify_and_map", false),
            AllowNonTls = section.GetBool("allow_non_tls", false),
            CipherSuites = [.. section.GetList("cipher_suites")],
            PinnedCerts = [.. section.GetList("pinned_certs")],
            Timeout = section.GetDuration("timeout", TlsOptions.DefaultTimeout),
        };
        if (options.VerifyAndMap)
        {
            options.Verify = true;
        }

        if (section["min_version"] is { } version)
        {
            options.MinVersion = version.Trim() switch
            {
                "1.2" => SslProtocols.Tls12,
                "1.3" => SslProtocols.Tls13,
                "1.0" or "1.1" => throw section.Refuse("min_version", $"unsupported TLS version: TLS {version}"),
                _ => throw section.Refuse("min_version", $"unknown version: {version}"),
            };
        }

        foreach (var key in (string[])["handshake_first", "first", "immediate"])
        {
            if (section[key] is { } first)
            {
                ReadHandshakeFirst(options, section, key, first.Trim());
                break;
            }
        }

        Validate(options, section);
        return options;
    }

    // nats-server: a boolean, "auto", or a Go duration (the fallback delay); a bare number is not a duration.
    private static void ReadHandshakeFirst(TlsOptions options, IConfiguration section, string key, string value)
    {
        if (ConfigSyntax.TryParseBool(value, out var on))
        {
            options.HandshakeFirst = on;
        }
        else if (value.ToLowerInvariant() is "auto" or "auto_fallback")
        {
            options.HandshakeFirst = true;
            options.HandshakeFirstFallback = TlsOptions.DefaultHandshakeFirstFallback;
        }
        else if (ConfigSyntax.TryParseDuration(value, out var delay, out _))
        {
            options.HandshakeFirst = true;
            options.HandshakeFirstFallback = delay;
        }
        else
        {
            throw section.Refuse(key, $"field \"{key}\" value \"{value}\" is invalid");
        }
    }

    private static void Validate(TlsOptions options, IConfiguration section)
    {
        if (string.IsNullOrWhiteSpace(options.CertFile))
        {
            throw section.Refuse(null, "missing 'cert_file' in tls config");
        }

        if (string.IsNullOrWhiteSpace(options.KeyFile))
        {
            throw section.Refuse(null, "missing 'key_file' in tls config");
        }

        if (options.Verify && string.IsNullOrWhiteSpace(options.CaFile))
        {
            throw section.Refuse("verify", "'verify' needs 'ca_file' to check client certificates against");
        }

        if (options.Timeout <= TimeSpan.Zero)
        {
            throw section.Refuse("timeout", "must be positive");
        }

        foreach (var pin in options.PinnedCerts)
        {
            if (pin.Length != 64 || !pin.All(Uri.IsHexDigit))
            {
                throw section.Refuse("pinned_certs", $"error parsing tls config, 'pinned_certs' key {pin} does not look like hex-encoded sha256 of DER encoded SubjectPublicKeyInfo");
            }
        }
    }
}
