using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Configuration.ConfigFile.Internal;
using Broker.Host.Tests.Conf;

namespace Broker.Host.Tests.ConfigFile.Internal;

/// <summary>Entries parsed from text and the mapping's output as lines, for the mapper's collaborators.</summary>
internal static class MapperTestKit
{
    /// <summary>The top-level entries of <paramref name="text"/>.</summary>
    public static IReadOnlyList<ConfEntry> Entries(string text) => [.. ConfTestKit.Parse(text).Entries];

    /// <summary>The one top-level entry of <paramref name="text"/> (the last one when it has several).</summary>
    public static ConfEntry Entry(string text) => Entries(text)[^1];

    /// <summary>The settings as <c>key=value</c>, in the ordinal order of the keys.</summary>
    public static string[] Settings(ConfMapping mapping) =>
        [.. mapping.Settings.OrderBy(kv => kv.Key, StringComparer.Ordinal).Select(kv => $"{kv.Key}={kv.Value}")];

    /// <summary>The diagnostics as <c>Kind position: message</c>, in the mapping's order.</summary>
    public static string[] Diagnostics(ConfMapping mapping) =>
        [.. mapping.Diagnostics.Select(d => $"{d.Kind} {d}")];

    /// <summary>What a builder holds now.</summary>
    public static ConfMapping Built(ConfMappingBuilder output) => output.Build("test.conf");
}
