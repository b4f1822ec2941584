using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

/// <summary>What a <see cref="ConfDiagnostic"/> means for the configuration file.</summary>
internal enum ConfDiagnosticKind
{
    /// <summary>The file cannot be used: the host does not start, <c>-t</c> fails, a reload is refused.</summary>
    Error,

    /// <summary>
    /// One of nats-server's own warnings (a duration written as a bare number of seconds): the file is used, but
    /// <c>-t</c> fails, as nats-server's does.
    /// </summary>
    Warning,

    /// <summary>A feature this broker does not have yet: its keys are ignored, the file is used and <c>-t</c> passes.</summary>
    Unsupported,
}

/// <summary>One problem found while mapping a configuration file, at the key (or array item) it concerns.</summary>
/// <param name="Kind">How serious it is.</param>
/// <param name="Position">Where; <see langword="null"/> for a problem of the whole file.</param>
/// <param name="Message">nats-server's wording where it has one.</param>
internal sealed record ConfDiagnostic(ConfDiagnosticKind Kind, ConfPosition? Position, string Message)
{
    /// <summary>Formats as nats-server prints configuration errors: <c>file:line:column: message</c>.</summary>
    /// <returns>The line.</returns>
    public override string ToString() => Position is { } position ? $"{position}: {Message}" : Message;
}

/// <summary>A configuration file mapped onto configuration keys, with what was found wrong or ignored.</summary>
/// <param name="File">The file as named on the command line.</param>
/// <param name="Settings">Keys of the <c>Broker</c> and <c>Plugins:&lt;Id&gt;</c> sections, ready to be a configuration layer.</param>
/// <param name="Diagnostics">Errors, warnings and ignored features, warnings first then errors, each group in file order.</param>
internal sealed record ConfMapping(string File, IReadOnlyDictionary<string, string?> Settings, IReadOnlyList<ConfDiagnostic> Diagnostics)
{
    /// <summary>Where each plugin setting (<c>Plugins:&lt;Id&gt;:...</c>) was written; keys are case-insensitive.</summary>
    public IReadOnlyDictionary<string, ConfPosition> Positions { get; init; } = new Dictionary<string, ConfPosition>();

    /// <summary>Whether the file cannot be used.</summary>
    public bool HasErrors => Diagnostics.Any(d => d.Kind == ConfDiagnosticKind.Error);

    /// <summary>Whether <c>-t</c> rejects the file: errors or nats-server's own warnings, as nats-server's <c>-t</c>.</summary>
    public bool FailsCheck => Diagnostics.Any(d => d.Kind != ConfDiagnosticKind.Unsupported);
}
