using System.Globalization;
using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The top-level keys of the server itself (nats-server opts.go processConfigFileLine): where it listens, its name,
/// logging, monitoring, limits, pings, lame duck mode and the system account, with nats-server's aliases and checks, onto
/// <see cref="BrokerOptions"/> and <see cref="BrokerHostOptions"/>.
/// </summary>
internal sealed class ServerSettingsMapper
{
    // nats-server's default listen address, which a listen value without a host asks for.
    private const string BrokerDefaultHost = "0.0.0.0";

    private static readonly TimeSpan MinimumLameDuckDuration = TimeSpan.FromSeconds(30);

    private static readonly Dictionary<string, Action<ServerSettingsMapper, ConfEntry>> Keys = new(StringComparer.OrdinalIgnoreCase)
    {
        ["listen"] = static (m, e) => m.Listen(e, Key(nameof(BrokerOptions.Host)), Key(nameof(BrokerOptions.Port)), BrokerDefaultHost),
        ["port"] = static (m, e) => m.reader.SetInt32(e, Key(nameof(BrokerOptions.Port))),
        ["host"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerOptions.Host))),
        ["net"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerOptions.Host))),
        ["server_name"] = static (m, e) => m.ServerName(e),
        ["debug"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerHostOptions.Debug))),
        ["trace"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["trace_verbose"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["trace_headers"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerHostOptions.Trace))),
        ["logtime"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerHostOptions.LogTime))),
        ["logfile"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerHostOptions.LogFile))),
        ["log_file"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerHostOptions.LogFile))),
        ["pidfile"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerHostOptions.PidFile))),
        ["pid_file"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerHostOptions.PidFile))),
        ["ports_file_dir"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerHostOptions.PortsFileDir))),
        ["http"] = static (m, e) => m.Listen(e, Monitoring(nameof(MonitoringOptions.Host)), Monitoring(nameof(MonitoringOptions.Port)), null),
        ["http_port"] = static (m, e) => m.reader.SetInt32(e, Monitoring(nameof(MonitoringOptions.Port))),
        ["monitor_port"] = static (m, e) => m.reader.SetInt32(e, Monitoring(nameof(MonitoringOptions.Port))),
        ["http_base_path"] = static (m, e) => m.reader.SetString(e, Monitoring(nameof(MonitoringOptions.BasePath))),
        ["max_control_line"] = static (m, e) => m.reader.SetInt32(e, Key(nameof(BrokerOptions.MaxControlLine))),
        ["max_payload"] = static (m, e) => m.reader.SetInt32(e, Key(nameof(BrokerOptions.MaxPayload))),
        ["max_pending"] = static (m, e) => m.reader.SetInt64(e, Key(nameof(BrokerOptions.MaxPending))),
        ["max_connections"] = static (m, e) => m.MaxConnections(e),
        ["max_conn"] = static (m, e) => m.MaxConnections(e),
        ["max_subscriptions"] = static (m, e) => m.MaxSubscriptions(e),
        ["max_subs"] = static (m, e) => m.MaxSubscriptions(e),
        ["max_sub_tokens"] = static (m, e) => m.MaxSubTokens(e),
        ["max_subscription_tokens"] = static (m, e) => m.MaxSubTokens(e),
        ["ping_interval"] = static (m, e) => m.reader.SetDuration(e, "ping_interval", Key(nameof(BrokerOptions.PingInterval))),
        ["ping_max"] = static (m, e) => m.reader.SetInt32(e, Key(nameof(BrokerOptions.MaxPingsOutstanding))),
        ["write_deadline"] = static (m, e) => m.reader.SetDuration(e, "write_deadline", Key(nameof(BrokerOptions.WriteDeadline))),
        ["max_closed_clients"] = static (m, e) => m.reader.SetInt32(e, Key(nameof(BrokerOptions.MaxClosedClients))),
        ["lame_duck_duration"] = static (m, e) => m.LameDuckDuration(e),
        ["lame_duck_grace_period"] = static (m, e) => m.LameDuckGracePeriod(e),
        ["no_header_support"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerOptions.NoHeaderSupport))),
        ["system_account"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerOptions.SystemAccount))),
        ["system"] = static (m, e) => m.reader.SetString(e, Key(nameof(BrokerOptions.SystemAccount))),
        ["no_system_account"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerOptions.NoSystemAccount))),
        ["no_system"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerOptions.NoSystemAccount))),
        ["no_sys_acc"] = static (m, e) => m.reader.SetBool(e, Key(nameof(BrokerOptions.NoSystemAccount))),
    };

    private readonly ConfValueReader reader;
    private readonly ConfMappingBuilder output;

    /// <summary>Creates the mapper.</summary>
    /// <param name="reader">Typed reads of the values.</param>
    /// <param name="output">Where values and diagnostics go.</param>
    public ServerSettingsMapper(ConfValueReader reader, ConfMappingBuilder output)
    {
        this.reader = reader;
        this.output = output;
    }

    /// <summary>Whether <paramref name="key"/> (any letter case) is one of the server's own keys.</summary>
    public static bool Reads(string key) => Keys.ContainsKey(key);

    /// <summary>Maps a top-level entry if it is one of the server's keys.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (!Keys.TryGetValue(entry.Key, out var map))
        {
            return false;
        }

        map(this, entry);
        return true;
    }

    // nats-server's parseListen: a port alone, or "host:port" split as Go's net.SplitHostPort does. Port -1 is
    // nats-server's "random port", which the settings layer turns into 0.
    public void Listen(ConfEntry entry, string hostKey, string portKey, string? defaultHost)
    {
        switch (entry.Value)
        {
            case ConfInteger port:
                output.Set(portKey, Format(port.Value));
                return;
            case ConfString text:
                if (!TrySplitHostPort(text.Value, out var host, out var portText))
                {
                    output.Error(entry.KeyPosition, $"could not parse address string \"{text.Value}\"");
                    return;
                }

                if (!int.TryParse(portText, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number))
                {
                    output.Error(entry.KeyPosition, $"could not parse port \"{portText}\"");
                    return;
                }

                if (host.Length > 0 || defaultHost is not null)
                {
                    output.Set(hostKey, host.Length > 0 ? host : defaultHost);
                }

                output.Set(portKey, Format(number));
                return;
            default:
                output.Error(entry.KeyPosition, $"expected port or host:port, got {GoType(entry.Value)}");
                return;
        }
    }

    /// <summary>Go's <c>net.SplitHostPort</c>: <c>host:port</c>, <c>[v6]:port</c>, <c>:port</c>; a bare host or an unbracketed IPv6 fails.</summary>
    public static bool TrySplitHostPort(string text, out string host, out string port)
    {
        host = port = "";
        var colon = text.LastIndexOf(':');
        if (colon < 0)
        {
            return false;
        }

        if (text.StartsWith('['))
        {
            var close = text.IndexOf(']', StringComparison.Ordinal);
            if (close < 0 || close + 1 != colon)
            {
                return false;
            }

            host = text[1..close];
        }
        else
        {
            host = text[..colon];
            if (host.Contains(':', StringComparison.Ordinal) || host.Contains('[', StringComparison.Ordinal) || host.Contains(']', StringComparison.Ordinal))
            {
                return false;
            }
        }

        port = text[(colon + 1)..];
        return !port.Contains('[', StringComparison.Ordinal) && !port.Contains(']', StringComparison.Ordinal);
    }

    private void ServerName(ConfEntry entry)
    {
        if (!reader.TryString(entry, out var name))
        {
            return;
        }

        if (name.Contains(' ', StringComparison.Ordinal))
        {
            output.Error(entry.KeyPosition, "server name cannot contain spaces");
            return;
        }

        output.Set(Key(nameof(BrokerOptions.ServerName)), name);
    }

    // Passed as written: BrokerOptions reads 0 as the default (65536) and a negative value as no limit, as nats-server
    // 2.9.10 does (checked by connecting to it with max_connections 0 and -1).
    private void MaxConnections(ConfEntry entry)
    {
        if (reader.TryInt32(entry, out var value))
        {
            output.Set(Key(nameof(BrokerOptions.MaxConnections)), Format(value));
        }
    }

    // nats-server reads a negative limit as "no limit", which our options spell 0.
    private void MaxSubscriptions(ConfEntry entry)
    {
        if (reader.TryInt32(entry, out var value))
        {
            output.Set(Key(nameof(BrokerOptions.MaxSubscriptions)), Format(Math.Max(value, 0)));
        }
    }

    private void MaxSubTokens(ConfEntry entry)
    {
        if (!reader.TryInteger(entry, out var value))
        {
            return;
        }

        if (value > byte.MaxValue)
        {
            output.Error(entry.KeyPosition, $"{entry.Key} value is too big");
        }
        else if (value <= 0)
        {
            output.Error(entry.KeyPosition, $"{entry.Key} value can not be negative");
        }
        else
        {
            output.Set(Key(nameof(BrokerOptions.MaxSubTokens)), Format(value));
        }
    }

    // Strictly a Go duration string here (no bare seconds), at least 30 seconds.
    private void LameDuckDuration(ConfEntry entry)
    {
        if (!reader.TryString(entry, out var text))
        {
            return;
        }

        if (!ConfigSyntax.TryParseDuration(text, out var duration, out var error))
        {
            output.Error(entry.KeyPosition, $"error parsing lame_duck_duration: {error}");
        }
        else if (duration < MinimumLameDuckDuration)
        {
            output.Error(entry.KeyPosition, $"invalid lame_duck_duration of {text}, minimum is 30 seconds");
        }
        else
        {
            output.Set(Key(nameof(BrokerOptions.LameDuckDuration)), Format(duration));
        }
    }

    // Not negative; 0 asks for the default (nats-server fills in its default for a zero value).
    private void LameDuckGracePeriod(ConfEntry entry)
    {
        if (!reader.TryString(entry, out var text))
        {
            return;
        }

        if (!ConfigSyntax.TryParseDuration(text, out var duration, out var error))
        {
            output.Error(entry.KeyPosition, $"error parsing lame_duck_grace_period: {error}");
        }
        else if (duration < TimeSpan.Zero)
        {
            output.Error(entry.KeyPosition, "invalid lame_duck_grace_period, needs to be positive");
        }
        else if (duration > TimeSpan.Zero)
        {
            output.Set(Key(nameof(BrokerOptions.LameDuckGracePeriod)), Format(duration));
        }
    }
}
