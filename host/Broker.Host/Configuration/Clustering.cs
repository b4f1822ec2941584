namespace Broker.Host.Configuration;

/// <summary>
/// nats-server's clustering (routes, the <c>cluster { }</c> block, <c>--cluster</c>, <c>--routes</c>, ...) is not
/// offered: the broker runs as a single server. Its settings are accepted, so a harness that always passes them still
/// starts the broker, and ignored with one warning, whether they come from the file or from flags.
/// </summary>
internal static class Clustering
{
    /// <summary>The feature's name in configuration-file notices.</summary>
    public const string Feature = "Clustering";

    /// <summary>The one warning, naming what is ignored (<c>"cluster"</c>, <c>"--routes"</c>).</summary>
    public static string Ignoring(IEnumerable<string> keys) =>
        $"{Feature}: not offered (this broker runs as a single server), ignoring {string.Join(", ", keys.Select(k => $"\"{k}\""))}";

    /// <summary>The cluster flags given on the command line, as typed names (<c>--cluster</c>).</summary>
    public static IReadOnlyList<string> Flags(IReadOnlyDictionary<string, string?> flags) =>
        [.. flags.Keys
            .Where(k => k.StartsWith(CommandLineFlags.ClusterFlagsKey, StringComparison.OrdinalIgnoreCase))
            .Select(k => "--" + k[CommandLineFlags.ClusterFlagsKey.Length..])
            .Order(StringComparer.Ordinal)];
}
