namespace Broker.Host.Configuration;

/// <summary>
/// nats-server's TLS flags (<c>--tls</c>, <c>--tlscert</c>, <c>--tlskey</c>, <c>--tlsverify</c>, <c>--tlscacert</c>)
/// turned into the settings a <c>tls { }</c> block gives the TLS plugin (<c>Plugins:Tls:cert_file</c>, ...), as
/// nats-server's <c>overrideTLS</c> does: any of them replaces the certificate, key, CA and client verification of
/// the configuration (a <c>tls</c> block's timeout, pinned certificates and the like stay); <c>-tls=false</c> turns TLS
/// off whatever the configuration file says.
/// </summary>
internal static class TlsFlags
{
    /// <summary>Where <c>--tls</c> is parsed to.</summary>
    public const string EnabledKey = Prefix + "Enabled";

    /// <summary>Where <c>--tlscert</c> is parsed to.</summary>
    public const string CertKey = Prefix + "Cert";

    /// <summary>Where <c>--tlskey</c> is parsed to.</summary>
    public const string KeyKey = Prefix + "Key";

    /// <summary>Where <c>--tlsverify</c> is parsed to.</summary>
    public const string VerifyKey = Prefix + "Verify";

    /// <summary>Where <c>--tlscacert</c> is parsed to.</summary>
    public const string CaCertKey = Prefix + "CaCert";

    /// <summary>
    /// What the flags did to TLS, for <see cref="HostConfiguration"/>: <see cref="Override"/> or <see cref="Off"/>;
    /// absent when no TLS flag was given.
    /// </summary>
    public const string ModeKey = "Command:Tls";

    /// <summary>The flags name the certificate, key, CA and verification.</summary>
    public const string Override = "override";

    /// <summary><c>-tls=false</c>: no TLS.</summary>
    public const string Off = "off";

    /// <summary>The id of the first-party TLS plugin, whose section the flags fill.</summary>
    public const string PluginId = "Tls";

    /// <summary>The TLS plugin's section, which a <c>tls { }</c> block fills.</summary>
    public const string PluginSection = HostConfiguration.PluginsSection + ":" + PluginId;

    // The plugin's keys that nats-server keeps in the TLS config the flags replace (GenTLSConfig's inputs).
    private static readonly string[] ReplacedKeys = ["cert_file", "key_file", "ca_file", "verify", "cipher_suites", "min_version", "curve_preferences"];

    private const string Prefix = "Command:TlsFlag:";

    /// <summary>
    /// Replaces the parsed TLS flags in <paramref name="settings"/> by the TLS plugin's keys.
    /// </summary>
    /// <returns><see langword="null"/>, or nats-server's error when the certificate or key is missing.</returns>
    public static string? Apply(Dictionary<string, string?> settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var given = settings.Keys.Where(k => k.StartsWith(Prefix, StringComparison.OrdinalIgnoreCase)).ToList();
        if (given.Count == 0)
        {
            return null;
        }

        var values = given.ToDictionary(k => k, k => settings[k], StringComparer.OrdinalIgnoreCase);
        foreach (var key in given)
        {
            settings.Remove(key);
        }

        if (values.TryGetValue(EnabledKey, out var enabled) && enabled == "false")
        {
            settings[ModeKey] = Off;
            return null;
        }

        if (string.IsNullOrEmpty(values.GetValueOrDefault(CertKey)))
        {
            return "TLS Server certificate must be present and valid";
        }

        if (string.IsNullOrEmpty(values.GetValueOrDefault(KeyKey)))
        {
            return "TLS Server private key must be present and valid";
        }

        settings[ModeKey] = Override;
        settings[PluginSection + ":cert_file"] = values[CertKey];
        settings[PluginSection + ":key_file"] = values[KeyKey];
        if (values.GetValueOrDefault(CaCertKey) is { Length: > 0 } ca)
        {
            settings[PluginSection + ":ca_file"] = ca;
        }

        settings[PluginSection + ":verify"] = values.GetValueOrDefault(VerifyKey) == "true" ? "true" : "false";
        return null;
    }

    /// <summary>
    /// Whether a key of a layer below the flags (the configuration file, the environment) gives way to them: with
    /// <see cref="Off"/> every TLS key does, with <see cref="Override"/> those the flags replace.
    /// </summary>
    public static bool Replaces(string? mode, string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (mode is null)
        {
            return false;
        }

        // The section's own key marks a written tls { } block (ConfMapper): with TLS off it gives way like the rest.
        if (key.Equals(PluginSection, StringComparison.OrdinalIgnoreCase))
        {
            return mode == Off;
        }

        if (!key.StartsWith(PluginSection + ":", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        if (mode == Off)
        {
            return true;
        }

        var name = key[(PluginSection.Length + 1)..];
        var colon = name.IndexOf(':', StringComparison.Ordinal);
        name = colon < 0 ? name : name[..colon];
        return ReplacedKeys.Contains(name, StringComparer.OrdinalIgnoreCase);
    }
}
