namespace Broker.Host.Configuration;

/// <summary>
/// Settings of the executable itself, read from the same <c>Broker</c> section as <see cref="Core.BrokerOptions"/>
/// (their names follow nats-server's config keys <c>debug</c>, <c>trace</c>, <c>logfile</c>, <c>pid_file</c>, ...).
/// </summary>
internal sealed class BrokerHostOptions
{
    /// <summary>The keys of the <c>Broker</c> section that belong to the host rather than to the broker.</summary>
    public static IReadOnlySet<string> Keys { get; } = new HashSet<string>(StringComparer.OrdinalIgnoreCase)
    {
        nameof(PluginsPath), nameof(Debug), nameof(Trace), nameof(LogFile), nameof(LogTime), nameof(ConfigFile),
        nameof(PidFile), nameof(PortsFileDir), nameof(ExecutableName),
    };

    /// <summary>
    /// The plugins folder (<c>--plugins</c>). Default <see langword="null"/>: <c>plugins/</c> next to the executable.
    /// A relative path is relative to the current directory.
    /// </summary>
    public string? PluginsPath { get; set; }

    /// <summary>Log at Debug level (<c>-D</c>, <c>debug</c>). Default <see langword="false"/>.</summary>
    public bool Debug { get; set; }

    /// <summary>Log at Verbose (trace) level (<c>-V</c>, <c>-DV</c>, <c>trace</c>). Default <see langword="false"/>.</summary>
    public bool Trace { get; set; }

    /// <summary>Write the log to this file instead of standard error (<c>-l</c>, <c>logfile</c>). Default <see langword="null"/>.</summary>
    public string? LogFile { get; set; }

    /// <summary>Start log lines with a timestamp (<c>-T</c>, <c>logtime</c>). Default <see langword="true"/>.</summary>
    public bool LogTime { get; set; } = true;

    /// <summary>
    /// The nats-server configuration file (<c>-c</c>); its settings sit between appsettings.json and the environment.
    /// Default <see langword="null"/>: none.
    /// </summary>
    public string? ConfigFile { get; set; }

    /// <summary>Write the process id to this file while running (<c>-P</c>, <c>pid_file</c>). Default <see langword="null"/>.</summary>
    public string? PidFile { get; set; }

    /// <summary>
    /// Write <c>&lt;executable&gt;_&lt;pid&gt;.ports</c> with the bound URLs into this folder once listening
    /// (<c>--ports_file_dir</c>, <c>ports_file_dir</c>). Default <see langword="null"/>: no ports file.
    /// </summary>
    public string? PortsFileDir { get; set; }

    /// <summary>
    /// The executable name the ports file is named after. Default <see langword="null"/>: the name this process was
    /// started as (argv[0], as nats-server), or <c>Broker.Host</c> when started through <c>dotnet Broker.Host.dll</c>.
    /// A launcher named <c>nats-server</c> sets it (<c>BROKER_EXECUTABLENAME=nats-server</c>) so harnesses find the
    /// <c>nats-server_&lt;pid&gt;.ports</c> file they expect.
    /// </summary>
    public string? ExecutableName { get; set; }

}
