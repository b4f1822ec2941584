namespace Broker.Host.Configuration;

/// <summary>
/// Settings of the executable itself, read from the same <c>Broker</c> section as <see cref="Core.BrokerOptions"/>
/// (their names follow nats-server's config keys <c>debug</c>, <c>trace</c>, <c>logfile</c>).
/// </summary>
internal sealed class BrokerHostOptions
{
    /// <summary>The keys of the <c>Broker</c> section that belong to the host rather than to the broker.</summary>
    public static IReadOnlySet<string> Keys { get; } = new HashSet<string>(StringComparer.OrdinalIgnoreCase)
    {
        nameof(PluginsPath), nameof(Debug), nameof(Trace), nameof(LogFile),
    };

    /// <summary>
    /// The plugins folder (<c>--plugins</c>). Default <see langword="null"/>: <c>plugins/</c> next to the executable.
    /// A relative path is relative to the current directory.
    /// </summary>
    public string? PluginsPath { get; set; }

    /// <summary>Log at Debug level (<c>-D</c>). Default <see langword="false"/>.</summary>
    public bool Debug { get; set; }

    /// <summary>Log at Verbose (trace) level (<c>-V</c>, <c>-DV</c>). Default <see langword="false"/>.</summary>
    public bool Trace { get; set; }

    /// <summary>Write the log to this file instead of standard error (<c>-l</c>). Default <see langword="null"/>.</summary>
    public string? LogFile { get; set; }
}
