using System.Globalization;
using System.Security.Authentication;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// Reads <see cref="TlsOptions"/> from configuration with nats-server's key names, refusing unknown keys and bad
/// values with a message naming the key, and the plugin-level <c>listeners</c> list.
/// </summary>
internal sealed class TlsPluginSettings
{
    private static readonly HashSet<string> Keys = new(StringComparer.OrdinalIgnoreCase)
    {
        "cert_file", "key_file", "ca_file", "verify", "verify_and_map", "min_version", "cipher_suites", "timeout",
        "handshake_first", "first", "immediate", "allow_non_tls", "pinned_certs",
    };

    private TlsPluginSettings(TlsOptions? options, IReadOnlyList<string> listeners)
    {
        Options = options;
        Listeners = listeners;
    }

    /// <summary>The root options, or <see langword="null"/> when the section configures no TLS.</summary>
    public TlsOptions? Options { get; }

    /// <summary>Listeners the root options secure (default: the NATS client port).</summary>
    public IReadOnlyList<string> Listeners { get; }

    public static TlsPluginSettings Read(IConfiguration section, string path)
    {
        var listeners = ReadList(section, "listeners");
        var hasSettings = section.GetChildren().Any(c => !string.Equals(c.Key, "listeners", StringComparison.OrdinalIgnoreCase));
        if (!hasSettings)
        {
            if (listeners.Count > 0)
            {
                throw new InvalidOperationException($"{path}: listeners are named but no TLS settings (cert_file, key_file) are given");
            }

            return new TlsPluginSettings(null, []);
        }

        return new TlsPluginSettings(ReadOptions(section, path, allowListeners: true), listeners.Count > 0 ? listeners : ["client"]);
    }

    /// <summary>Reads one <c>tls { }</c> block.</summary>
    /// <exception cref="InvalidOperationException">A key is unknown or a value is invalid; the message names it.</exception>
    public static TlsOptions ReadOptions(IConfiguration section, string path, bool allowListeners = false)
    {
        foreach (var child in section.GetChildren())
        {
            if (!Keys.Contains(child.Key) && !(allowListeners && string.Equals(child.Key, "listeners", StringComparison.OrdinalIgnoreCase)))
            {
                throw new InvalidOperationException($"{path}: error parsing tls config, unknown field \"{child.Key}\"");
            }
        }

        var options = new TlsOptions
        {
            CertFile = section["cert_file"] ?? "",
            KeyFile = section["key_file"] ?? "",
            CaFile = section["ca_file"],
            Verify = ReadBool(section, "verify", path),
            VerifyAndMap = ReadBool(section, "verify_and_map", path),
            AllowNonTls = ReadBool(section, "allow_non_tls", path),
            CipherSuites = ReadList(section, "cipher_suites"),
            PinnedCerts = ReadList(section, "pinned_certs"),
        };
        if (options.VerifyAndMap)
        {
            options.Verify = true;
        }

        if (section["timeout"] is { } timeout)
        {
            options.Timeout = ParseDuration(timeout, defaultUnitSeconds: true)
                ?? throw new InvalidOperationException($"{path}: error parsing tls config, 'timeout' {timeout} is not a number of seconds or a duration");
        }

        if (section["min_version"] is { } version)
        {
            options.MinVersion = version.Trim() switch
            {
                "1.2" => SslProtocols.Tls12,
                "1.3" => SslProtocols.Tls13,
                "1.0" or "1.1" => throw new InvalidOperationException($"{path}: unsupported TLS version: TLS {version}"),
                _ => throw new InvalidOperationException($"{path}: unknown version: {version}"),
            };
        }

        var first = section["handshake_first"] ?? section["first"] ?? section["immediate"];
        if (first is not null)
        {
            ReadHandshakeFirst(options, first.Trim(), path);
        }

        Validate(options, path);
        return options;
    }

    private static void ReadHandshakeFirst(TlsOptions options, string value, string path)
    {
        switch (value.ToLowerInvariant())
        {
            case "true" or "on" or "yes":
                options.HandshakeFirst = true;
                break;
            case "false" or "off" or "no":
                options.HandshakeFirst = false;
                break;
            case "auto" or "auto_fallback":
                options.HandshakeFirst = true;
                options.HandshakeFirstFallback = TlsOptions.DefaultHandshakeFirstFallback;
                break;
            default:
                options.HandshakeFirst = true;
                options.HandshakeFirstFallback = ParseDuration(value, defaultUnitSeconds: false)
                    ?? throw new InvalidOperationException($"{path}: field \"handshake_first\"'s value \"{value}\" is invalid");
                break;
        }
    }

    private static void Validate(TlsOptions options, string path)
    {
        if (string.IsNullOrWhiteSpace(options.CertFile))
        {
            throw new InvalidOperationException($"{path}: missing 'cert_file' in tls config");
        }

        if (string.IsNullOrWhiteSpace(options.KeyFile))
        {
            throw new InvalidOperationException($"{path}: missing 'key_file' in tls config");
        }

        if (options.Verify && string.IsNullOrWhiteSpace(options.CaFile))
        {
            throw new InvalidOperationException($"{path}: 'verify' needs 'ca_file' to check client certificates against");
        }

        if (options.Timeout <= TimeSpan.Zero)
        {
            throw new InvalidOperationException($"{path}: 'timeout' must be positive");
        }

        foreach (var pin in options.PinnedCerts)
        {
            if (pin.Length != 64 || !pin.All(Uri.IsHexDigit))
            {
                throw new InvalidOperationException(
                    $"{path}: error parsing tls config, 'pinned_certs' key {pin} does not look like hex-encoded sha256 of DER encoded SubjectPublicKeyInfo");
            }
        }
    }

    private static bool ReadBool(IConfiguration section, string key, string path)
    {
        var value = section[key];
        if (value is null)
        {
            return false;
        }

        return value.Trim().ToLowerInvariant() switch
        {
            "true" or "yes" or "on" => true,
            "false" or "no" or "off" => false,
            _ => throw new InvalidOperationException($"{path}: error parsing tls config, expected '{key}' to be a boolean"),
        };
    }

    /// <summary>A list given as an array (<c>key:0</c>, <c>key:1</c>, ...) or as one comma-separated value.</summary>
    private static List<string> ReadList(IConfiguration section, string key)
    {
        var child = section.GetSection(key);
        var items = child.GetChildren().Select(c => c.Value).Where(v => !string.IsNullOrWhiteSpace(v)).Select(v => v!.Trim()).ToList();
        if (items.Count == 0 && !string.IsNullOrWhiteSpace(child.Value))
        {
            items.AddRange(child.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }

        return items;
    }

    /// <summary>A bare number (seconds, or milliseconds when not <paramref name="defaultUnitSeconds"/>) or a Go-style duration: 500ms, 2s, 1m, 1h.</summary>
    private static TimeSpan? ParseDuration(string text, bool defaultUnitSeconds)
    {
        text = text.Trim();
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var bare))
        {
            return defaultUnitSeconds ? TimeSpan.FromSeconds(bare) : TimeSpan.FromMilliseconds(bare);
        }

        (string Suffix, double Scale)[] units = [("ms", 1), ("us", 0.001), ("µs", 0.001), ("ns", 0.000001), ("s", 1000), ("m", 60_000), ("h", 3_600_000)];
        foreach (var (suffix, scale) in units)
        {
            if (text.EndsWith(suffix, StringComparison.Ordinal)
                && double.TryParse(text[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
            {
                return TimeSpan.FromMilliseconds(value * scale);
            }
        }

        return null;
    }
}
