using System.Globalization;
using Microsoft.Extensions.Configuration;

namespace Broker.Abstractions;

/// <summary>
/// Reads settings written in nats-server's syntax from a configuration section, whichever source they came from (a
/// block of a nats-server configuration file, appsettings.json, <c>BROKER_</c> environment variables): durations,
/// sizes, integers, booleans and lists. A bad value throws <see cref="PluginConfigurationException"/> naming the full
/// key, so a plugin that reads its settings in <see cref="IBrokerPlugin.ConfigureServices"/> refuses them without code
/// of its own.
/// </summary>
/// <remarks>
/// Keys are case-insensitive. A missing key, or one whose value is empty, is "not set": the overloads with a default
/// return the default and the others <see langword="null"/>. The syntax is that of <see cref="ConfigSyntax"/>; a
/// configuration file has already turned size suffixes into plain numbers, and other sources may keep them as text.
/// </remarks>
/// <example>
/// <code>
/// var settings = context.Configuration;
/// settings.RejectUnknownKeys("port", "max_connections", "idle_timeout", "max_line");
/// var port = settings.GetInt32("port", 0);
/// var idle = settings.GetDuration("idle_timeout");      // "1m30s", "500ms", or a bare number of seconds
/// var maxLine = settings.GetSize("max_line", 65536);    // 1048576, "1MB", "64KB"
/// </code>
/// </example>
public static class ConfigurationValues
{
    /// <summary>Reads a boolean: <c>true/yes/on</c> or <c>false/no/off</c>, any letter case.</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The value, or <see langword="null"/> when not set.</returns>
    /// <exception cref="PluginConfigurationException">The value is not a boolean.</exception>
    public static bool? GetBool(this IConfiguration configuration, string key)
    {
        if (Text(configuration, key) is not { } text)
        {
            return null;
        }

        return ConfigSyntax.TryParseBool(text, out var value)
            ? value
            : throw Refuse(configuration, key, $"expected boolean value, but got '{text}'");
    }

    /// <summary>Reads a boolean: <c>true/yes/on</c> or <c>false/no/off</c>, any letter case.</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <param name="defaultValue">The value when not set.</param>
    /// <returns>The value.</returns>
    /// <exception cref="PluginConfigurationException">The value is not a boolean.</exception>
    public static bool GetBool(this IConfiguration configuration, string key, bool defaultValue) =>
        GetBool(configuration, key) ?? defaultValue;

    /// <summary>Reads a 32-bit integer; size suffixes are allowed as in the configuration file (<c>1k</c>, <c>1KB</c>).</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The value, or <see langword="null"/> when not set.</returns>
    /// <exception cref="PluginConfigurationException">The value is not an integer or does not fit in 32 bits.</exception>
    public static int? GetInt32(this IConfiguration configuration, string key)
    {
        if (GetSize(configuration, key) is not { } value)
        {
            return null;
        }

        return value is >= int.MinValue and <= int.MaxValue
            ? (int)value
            : throw Refuse(configuration, key, $"integer '{Text(configuration, key)}' is out of the range");
    }

    /// <summary>Reads a 32-bit integer; size suffixes are allowed as in the configuration file (<c>1k</c>, <c>1KB</c>).</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <param name="defaultValue">The value when not set.</param>
    /// <returns>The value.</returns>
    /// <exception cref="PluginConfigurationException">The value is not an integer or does not fit in 32 bits.</exception>
    public static int GetInt32(this IConfiguration configuration, string key, int defaultValue) =>
        GetInt32(configuration, key) ?? defaultValue;

    /// <summary>
    /// Reads a size or any 64-bit integer: a number, optionally with a size suffix (<c>1MB</c> = 1 048 576,
    /// <c>64KB</c>, <c>1k</c> = 1 000; see <see cref="ConfigSyntax.TryParseSize"/>). Negative values are returned as
    /// they are (nats-server often reads <c>-1</c> as "unlimited"); check the range the setting allows.
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The value, or <see langword="null"/> when not set.</returns>
    /// <exception cref="PluginConfigurationException">The value is not an integer.</exception>
    public static long? GetSize(this IConfiguration configuration, string key)
    {
        if (Text(configuration, key) is not { } text)
        {
            return null;
        }

        return ConfigSyntax.TryParseSize(text, out var value, out var error) ? value : throw Refuse(configuration, key, error);
    }

    /// <summary>Reads a size or any 64-bit integer (see <see cref="GetSize(IConfiguration, string)"/>).</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <param name="defaultValue">The value when not set.</param>
    /// <returns>The value.</returns>
    /// <exception cref="PluginConfigurationException">The value is not an integer.</exception>
    public static long GetSize(this IConfiguration configuration, string key, long defaultValue) =>
        GetSize(configuration, key) ?? defaultValue;

    /// <summary>
    /// Reads a duration: a Go duration string (<c>"1m30s"</c>, <c>"500ms"</c>, <c>"2us"</c>, <c>"1h"</c>; see
    /// <see cref="ConfigSyntax.TryParseDuration"/>) or a bare number of seconds (<c>2</c>, <c>0.5</c>), which nats-server
    /// still accepts for its older duration settings.
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The value, or <see langword="null"/> when not set.</returns>
    /// <exception cref="PluginConfigurationException">The value is neither a duration nor a number.</exception>
    public static TimeSpan? GetDuration(this IConfiguration configuration, string key)
    {
        if (Text(configuration, key) is not { } text)
        {
            return null;
        }

        if (ConfigSyntax.TryParseDuration(text, out var value, out var error))
        {
            return value;
        }

        if (double.TryParse(text, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds)
            && Math.Abs(seconds) < TimeSpan.MaxValue.TotalSeconds)
        {
            return TimeSpan.FromSeconds(seconds);
        }

        throw Refuse(configuration, key, error);
    }

    /// <summary>Reads a duration (see <see cref="GetDuration(IConfiguration, string)"/>).</summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <param name="defaultValue">The value when not set.</param>
    /// <returns>The value.</returns>
    /// <exception cref="PluginConfigurationException">The value is neither a duration nor a number.</exception>
    public static TimeSpan GetDuration(this IConfiguration configuration, string key, TimeSpan defaultValue) =>
        GetDuration(configuration, key) ?? defaultValue;

    /// <summary>
    /// Reads a list of strings: an array (<c>[a, b]</c> in a configuration file, <c>key:0</c>, <c>key:1</c>, ... in
    /// other sources) or one comma-separated value (<c>"a, b"</c>). Items are trimmed; blank ones are dropped.
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The items in order; empty when not set.</returns>
    public static IReadOnlyList<string> GetList(this IConfiguration configuration, string key)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var section = configuration.GetSection(key);
        var items = section.GetChildren().Select(c => c.Value).Where(v => !string.IsNullOrWhiteSpace(v)).Select(v => v!.Trim()).ToList();
        if (items.Count == 0 && !string.IsNullOrWhiteSpace(section.Value))
        {
            items.AddRange(section.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }

        return items;
    }

    /// <summary>
    /// Reads a listener's address as nats-server's blocks write it: <c>listen: "host:port"</c> (IPv6 hosts in
    /// brackets, <c>":port"</c> keeping the host), then <c>host</c> (or <c>net</c>) and <c>port</c>, which override
    /// what <c>listen</c> gave. A port is -1 to 65535 (-1 and 0: any free port).
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="host">The host: its default on entry, the configured one on return.</param>
    /// <param name="port">The port: its default on entry (null: none), the configured one on return.</param>
    /// <exception cref="PluginConfigurationException"><c>listen</c> cannot be parsed, or <c>port</c> is out of range.</exception>
    public static void GetListenEndPoint(this IConfiguration configuration, ref string host, ref int? port)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        if (configuration["listen"] is { } listen)
        {
            var colon = listen.LastIndexOf(':');
            if (colon < 0 || !int.TryParse(listen[(colon + 1)..], NumberStyles.Integer, CultureInfo.InvariantCulture, out var listenPort))
            {
                throw configuration.Refuse("listen", $"could not parse listen address \"{listen}\"");
            }

            host = colon == 0 ? host : listen[..colon].Trim('[', ']');
            port = listenPort;
        }

        if ((configuration["host"] ?? configuration["net"]) is { } configuredHost)
        {
            host = configuredHost;
        }

        if (configuration.GetInt32("port") is { } configuredPort)
        {
            port = configuredPort is >= -1 and <= 65535 ? configuredPort : throw configuration.Refuse("port", $"{configuredPort} is not a valid port number");
        }
    }

    /// <summary>
    /// Refuses keys the plugin does not read, as nats-server refuses unknown fields, so a misspelt setting is never
    /// ignored silently.
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="knownKeys">The keys the section may hold (case-insensitive).</param>
    /// <exception cref="PluginConfigurationException">The section holds another key: <c>Plugins:Line: unknown field "prot"</c>.</exception>
    public static void RejectUnknownKeys(this IConfiguration configuration, params IEnumerable<string> knownKeys)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentNullException.ThrowIfNull(knownKeys);
        var known = new HashSet<string>(knownKeys, StringComparer.OrdinalIgnoreCase);
        foreach (var child in configuration.GetChildren())
        {
            if (!known.Contains(child.Key))
            {
                var path = PathOf(configuration);
                throw new PluginConfigurationException($"{(path.Length > 0 ? path + ": " : "")}unknown field \"{child.Key}\"") { Key = child.Path };
            }
        }
    }

    /// <summary>
    /// The full key of a setting for messages: <c>Plugins:Line:port</c> for key <c>port</c> of section
    /// <c>Plugins:Line</c>.
    /// </summary>
    /// <param name="configuration">The section (or a root, whose keys are already full).</param>
    /// <param name="key">The key, relative to the section.</param>
    /// <returns>The full key.</returns>
    public static string KeyPath(this IConfiguration configuration, string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        var path = PathOf(configuration);
        return path.Length == 0 ? key : ConfigurationPath.Combine(path, key);
    }

    /// <summary>
    /// The exception a plugin throws to refuse a setting, with the message every refusal has:
    /// <c>&lt;full key&gt;: &lt;reason&gt;</c> (<c>Plugins:Line:port: 70000 is not a valid port number</c>), or
    /// <c>&lt;section&gt;: &lt;reason&gt;</c> when no single key is at fault.
    /// </summary>
    /// <param name="configuration">The section.</param>
    /// <param name="key">The key at fault, relative to the section; <see langword="null"/> for the section as a whole.</param>
    /// <param name="reason">What is wrong.</param>
    /// <returns>The exception, to throw; its <see cref="PluginConfigurationException.Key"/> is the full key (or the section's path).</returns>
    public static PluginConfigurationException Refuse(this IConfiguration configuration, string? key, string reason)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var path = key is null ? PathOf(configuration) : KeyPath(configuration, key);
        return new PluginConfigurationException(path.Length > 0 ? $"{path}: {reason}" : reason) { Key = path.Length > 0 ? path : null };
    }

    private static string PathOf(IConfiguration configuration) => configuration is IConfigurationSection section ? section.Path : "";

    private static string? Text(IConfiguration configuration, string key)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentNullException.ThrowIfNull(key);
        var text = configuration[key]?.Trim();
        return string.IsNullOrEmpty(text) ? null : text;
    }
}
