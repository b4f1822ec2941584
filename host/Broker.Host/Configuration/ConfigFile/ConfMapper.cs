using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

/// <summary>
/// Maps a nats-server configuration file (a parsed <see cref="ConfMap"/>) onto configuration keys: broker settings
/// into the <c>Broker</c> section (<see cref="BrokerOptions"/> and <see cref="BrokerHostOptions"/> names), the blocks
/// and keys the loaded plugins read (<see cref="PluginBlocks"/>: <c>tls</c>, <c>websocket</c>, <c>mqtt</c>, a third
/// party's <c>&lt;id&gt; { }</c>) verbatim into their <c>Plugins:&lt;Id&gt;</c> sections. The result is one layer of the
/// host configuration.
/// </summary>
/// <remarks>
/// <para>Follows nats-server's <c>opts.go processConfigFileLine</c>: the same keys and aliases (case-insensitive),
/// the same value types (a wrong type is Go's <c>interface conversion</c> message), the same error texts, every
/// error at the key it concerns. All problems are collected, not just the first, as nats-server reports them.</para>
/// <para>Unknown keys are errors unless the key served as a <c>$variable</c>. Keys of features this broker does not
/// have yet (JetStream, clustering, MQTT, ...) are accepted with one notice per feature unless a plugin reads them;
/// security settings it cannot enforce (operator/JWT mode, accounts with users or nkeys, auth callout, OCSP, ...) are
/// errors, so a broker never runs less protected than its file says; so are the blocks of the broker's own plugins
/// (<c>tls</c>, <c>websocket</c>) when that plugin is not loaded.</para>
/// </remarks>
internal sealed partial class ConfMapper
{
    // processConfigFileLine's keys that map onto options we have; the rest are in ConfMapper.Features.cs.
    private static readonly Dictionary<string, Action<ConfMapper, ConfEntry>> TopLevel = new(StringComparer.OrdinalIgnoreCase)
    {
        ["listen"] = static (m, e) => m.Listen(e, Key(nameof(BrokerOptions.Host)), Key(nameof(BrokerOptions.Port)), BrokerDefaultHost),
        ["port"] = static (m, e) => m.SetInt32(e, Key(nameof(BrokerOptions.Port))),
        ["host"] = static (m, e) => m.SetString(e, Key(nameof(BrokerOptions.Host))),
        ["net"] = static (m, e) => m.SetString(e, Key(nameof(BrokerOptions.Host))),
        ["server_name"] = static (m, e) => m.ServerName(e),
        ["debug"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerHostOptions.Debug))),
        ["trace"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["trace_verbose"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["trace_headers"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["logtime"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerHostOptions.LogTime))),
        ["logfile"] = static (m, e) => m.SetString(e, Key(nameof(BrokerHostOptions.LogFile))),
        ["log_file"] = static (m, e) => m.SetString(e, Key(nameof(BrokerHostOptions.LogFile))),
        ["pidfile"] = static (m, e) => m.SetString(e, Key(nameof(BrokerHostOptions.PidFile))),
        ["pid_file"] = static (m, e) => m.SetString(e, Key(nameof(BrokerHostOptions.PidFile))),
        ["ports_file_dir"] = static (m, e) => m.SetString(e, Key(nameof(BrokerHostOptions.PortsFileDir))),
        ["http"] = static (m, e) => m.Listen(e, MonitoringKey(nameof(MonitoringOptions.Host)), MonitoringKey(nameof(MonitoringOptions.Port)), null),
        ["http_port"] = static (m, e) => m.SetInt32(e, MonitoringKey(nameof(MonitoringOptions.Port))),
        ["monitor_port"] = static (m, e) => m.SetInt32(e, MonitoringKey(nameof(MonitoringOptions.Port))),
        ["http_base_path"] = static (m, e) => m.SetString(e, MonitoringKey(nameof(MonitoringOptions.BasePath))),
        ["max_control_line"] = static (m, e) => m.SetInt32(e, Key(nameof(BrokerOptions.MaxControlLine))),
        ["max_payload"] = static (m, e) => m.SetInt32(e, Key(nameof(BrokerOptions.MaxPayload))),
        ["max_pending"] = static (m, e) => m.SetInt64(e, Key(nameof(BrokerOptions.MaxPending))),
        ["max_connections"] = static (m, e) => m.MaxConnections(e),
        ["max_conn"] = static (m, e) => m.MaxConnections(e),
        ["max_subscriptions"] = static (m, e) => m.MaxSubscriptions(e),
        ["max_subs"] = static (m, e) => m.MaxSubscriptions(e),
        ["max_sub_tokens"] = static (m, e) => m.MaxSubTokens(e),
        ["max_subscription_tokens"] = static (m, e) => m.MaxSubTokens(e),
        ["ping_interval"] = static (m, e) => m.SetDuration(e, "ping_interval", Key(nameof(BrokerOptions.PingInterval))),
        ["ping_max"] = static (m, e) => m.SetInt32(e, Key(nameof(BrokerOptions.MaxPingsOutstanding))),
        ["write_deadline"] = static (m, e) => m.SetDuration(e, "write_deadline", Key(nameof(BrokerOptions.WriteDeadline))),
        ["max_closed_clients"] = static (m, e) => m.SetInt32(e, Key(nameof(BrokerOptions.MaxClosedClients))),
        ["lame_duck_duration"] = static (m, e) => m.LameDuckDuration(e),
        ["lame_duck_grace_period"] = static (m, e) => m.LameDuckGracePeriod(e),
        ["no_header_support"] = static (m, e) => m.SetBool(e, Key(nameof(BrokerOptions.NoHeaderSupport))),
        ["authorization"] = static (m, e) => m.Authorization(e),
        ["no_auth_user"] = static (m, e) => m.SetString(e, AuthorizationKey(nameof(Core.Auth.AuthorizationOptions.NoAuthUser))),
    };

    // nats-server's default listen address, which a listen value without a host asks for.
    private const string BrokerDefaultHost = "0.0.0.0";

    private static readonly TimeSpan MinimumLameDuckDuration = TimeSpan.FromSeconds(30);

    private readonly string file;
    private readonly PluginBlocks plugins;
    private readonly Dictionary<string, string?> settings = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, ConfPosition> positions = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<ConfDiagnostic> diagnostics = [];
    private bool storeDirectorySeen;

    // Ignored features, in the order first met, each with the keys that asked for it.
    private readonly List<(string Feature, ConfPosition Position, List<string> Keys)> ignored = [];

    private ConfMapper(string file, PluginBlocks plugins)
    {
        this.file = file;
        this.plugins = plugins;
    }

    /// <summary>Reads and maps a configuration file; a file that cannot be parsed gives one error.</summary>
    /// <param name="path">The file, as named on the command line.</param>
    /// <param name="plugins">The blocks and keys the loaded plugins read; <see cref="PluginBlocks.None"/> when none.</param>
    /// <param name="environment">Looks up environment variables for <c>$name</c>.</param>
    /// <returns>The keys and diagnostics.</returns>
    public static ConfMapping MapFile(string path, PluginBlocks plugins, Func<string, string?>? environment = null)
    {
        ArgumentNullException.ThrowIfNull(path);
        ConfMap root;
        try
        {
            root = ConfParser.ParseFile(path, environment);
        }
        catch (ConfException ex)
        {
            return new ConfMapping(path, new Dictionary<string, string?>(), [new ConfDiagnostic(ConfDiagnosticKind.Error, ex.Position, ex.Reason)]);
        }

        return Map(root, path, plugins);
    }

    /// <summary>Maps a parsed document.</summary>
    /// <param name="root">The document.</param>
    /// <param name="file">The file name, for diagnostics that concern the whole file.</param>
    /// <param name="plugins">The blocks and keys the loaded plugins read; <see cref="PluginBlocks.None"/> when none.</param>
    /// <returns>The keys and diagnostics.</returns>
    public static ConfMapping Map(ConfMap root, string file, PluginBlocks plugins)
    {
        ArgumentNullException.ThrowIfNull(root);
        ArgumentNullException.ThrowIfNull(plugins);
        var mapper = new ConfMapper(file, plugins);
        if (root.Count == 0)
        {
            mapper.Warning(null, $"{file}: config has no values or is empty");
        }

        foreach (var entry in root.Entries)
        {
            if (TopLevel.TryGetValue(entry.Key, out var map))
            {
                map(mapper, entry);
            }
            else if (plugins.TryGet(entry.Key, out var block))
            {
                mapper.Plugin(entry, block);
            }
            else if (!mapper.TryFeature(entry))
            {
                mapper.Unknown(entry);
            }
        }

        return mapper.Result();
    }

    /// <summary>
    /// Whether the broker reads a top-level key itself (its own settings, and the security settings it refuses), so no
    /// plugin may claim it.
    /// </summary>
    /// <param name="key">The key, any letter case.</param>
    /// <returns><see langword="true"/> for the broker's keys.</returns>
    public static bool IsBrokerKey(string key) =>
        TopLevel.ContainsKey(key) || Refused.ContainsKey(key) || string.Equals(key, "accounts", StringComparison.OrdinalIgnoreCase);

    private static string Key(params string[] path) => HostConfiguration.BrokerSection + ":" + string.Join(':', path);

    private static string MonitoringKey(string property) => Key(nameof(BrokerOptions.Monitoring), property);

    private static string AuthorizationKey(params string[] path) => Key([nameof(BrokerOptions.Authorization), .. path]);

    private ConfMapping Result()
    {
        foreach (var (feature, position, keys) in ignored)
        {
            var names = string.Join(", ", keys.Select(k => $"\"{k}\""));
            var notice = feature == Clustering.Feature ? Clustering.Ignoring(keys) : $"{feature}: not supported yet, ignoring {names}";
            diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Unsupported, position, notice));
        }

        // Warnings before errors, as nats-server prints them.
        var ordered = diagnostics.Where(d => d.Kind != ConfDiagnosticKind.Error).Concat(diagnostics.Where(d => d.Kind == ConfDiagnosticKind.Error)).ToList();
        return new ConfMapping(file, settings, ordered) { Positions = positions };
    }

    private void Set(string key, string? value) => settings[key] = value;

    private void Error(ConfPosition? position, string message) => diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Error, position, message));

    private void Warning(ConfPosition? position, string message) => diagnostics.Add(new ConfDiagnostic(ConfDiagnosticKind.Warning, position, message));

    // nats-server: an unknown key is an error unless it served as a variable.
    private void Unknown(ConfEntry entry)
    {
        if (!entry.UsedAsVariable)
        {
            Error(entry.KeyPosition, $"unknown field \"{entry.Key}\"");
        }
    }

    private void ServerName(ConfEntry entry)
    {
        if (!TryString(entry, out var name))
        {
            return;
        }

        if (name.Contains(' ', StringComparison.Ordinal))
        {
            Error(entry.KeyPosition, "server name cannot contain spaces");
            return;
        }

        Set(Key(nameof(BrokerOptions.ServerName)), name);
    }

    // Passed as written: BrokerOptions reads 0 as the default (65536) and a negative value as no limit, as nats-server
    // 2.9.10 does (checked by connecting to it with max_connections 0 and -1).
    private void MaxConnections(ConfEntry entry)
    {
        if (TryInt32(entry, out var value))
        {
            Set(Key(nameof(BrokerOptions.MaxConnections)), Format(value));
        }
    }

    // nats-server reads a negative limit as "no limit", which our options spell 0.
    private void MaxSubscriptions(ConfEntry entry)
    {
        if (TryInt32(entry, out var value))
        {
            Set(Key(nameof(BrokerOptions.MaxSubscriptions)), Format(Math.Max(value, 0)));
        }
    }

    private void MaxSubTokens(ConfEntry entry)
    {
        if (!TryInteger(entry, out var value))
        {
            return;
        }

        if (value > byte.MaxValue)
        {
            Error(entry.KeyPosition, $"{entry.Key} value is too big");
        }
        else if (value <= 0)
        {
            Error(entry.KeyPosition, $"{entry.Key} value can not be negative");
        }
        else
        {
            Set(Key(nameof(BrokerOptions.MaxSubTokens)), Format(value));
        }
    }

    // Strictly a Go duration string here (no bare seconds), at least 30 seconds.
    private void LameDuckDuration(ConfEntry entry)
    {
        if (!TryString(entry, out var text))
        {
            return;
        }

        if (!ConfigSyntax.TryParseDuration(text, out var duration, out var error))
        {
            Error(entry.KeyPosition, $"error parsing lame_duck_duration: {error}");
        }
        else if (duration < MinimumLameDuckDuration)
        {
            Error(entry.KeyPosition, $"invalid lame_duck_duration of {text}, minimum is 30 seconds");
        }
        else
        {
            Set(Key(nameof(BrokerOptions.LameDuckDuration)), Format(duration));
        }
    }

    // Not negative; 0 asks for the default (nats-server fills in its default for a zero value).
    private void LameDuckGracePeriod(ConfEntry entry)
    {
        if (!TryString(entry, out var text))
        {
            return;
        }

        if (!ConfigSyntax.TryParseDuration(text, out var duration, out var error))
        {
            Error(entry.KeyPosition, $"error parsing lame_duck_grace_period: {error}");
        }
        else if (duration < TimeSpan.Zero)
        {
            Error(entry.KeyPosition, "invalid lame_duck_grace_period, needs to be positive");
        }
        else if (duration > TimeSpan.Zero)
        {
            Set(Key(nameof(BrokerOptions.LameDuckGracePeriod)), Format(duration));
        }
    }
}
