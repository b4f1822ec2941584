using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// What mapping a configuration file produces: the configuration keys with their values, where each plugin setting
/// was written, and the diagnostics in the order they were found. <see cref="Build"/> puts warnings before errors, as
/// nats-server prints them.
/// </summary>
internal sealed class ConfMappingBuilder
{
    private readonly Dictionary<string, string?> settings = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, ConfPosition> positions = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<ConfDiagnostic> diagnostics = [];

    /// <summary>Sets a configuration key (case-insensitive; a later value replaces an earlier one).</summary>
    public void Set(string key, string? value) => settings[key] = value;

    /// <summary>Records where the value of a key was written.</summary>
    public void SetPosition(string key, ConfPosition position) => positions[key] = position;

    /// <summary>Removes every key under <paramref name="prefix"/> (<c>prefix:...</c>), as when an entry turns out invalid.</summary>
    public void RemoveSection(string prefix)
    {
        foreach (var key in settings.Keys.Where(k => k.StartsWith(prefix + ":", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            settings.Remove(key);
        }
    }

    /// <summary>The file cannot be used.</summary>
    public void Error(ConfPosition? position, string message) => diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Error, position, message));

    /// <summary>One of nats-server's own warnings.</summary>
    public void Warning(ConfPosition? position, string message) => diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Warning, position, message));

    /// <summary>A feature this broker does not have: its keys are ignored.</summary>
    public void Unsupported(ConfPosition position, string message) => diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Unsupported, position, message));

    /// <summary>The mapping: the keys, their positions, and the diagnostics, warnings and notices first then errors.</summary>
    /// <param name="file">The file as named on the command line.</param>
    public ConfMapping Build(string file)
    {
        var ordered = diagnostics.Where(d => d.Kind != ConfDiagnosticKind.Error).Concat(diagnostics.Where(d => d.Kind == ConfDiagnosticKind.Error)).ToList();
        return new ConfMapping(file, settings, ordered) { Positions = positions };
    }
}
