using System.Text.Json;

namespace Broker.Core.Internal.Reload;

/// <summary>
/// Which settings differ between two <see cref="BrokerOptions"/>, and whether each can change while the broker
/// runs. Every public property of <see cref="BrokerOptions"/> must appear here (a test checks it), so a new option
/// cannot silently escape reload handling.
/// </summary>
internal static class OptionsComparer
{
    /// <summary>How a setting behaves on reload.</summary>
    internal enum Reloadability
    {
        /// <summary>Takes effect at once for every connection.</summary>
        Live,

        /// <summary>Takes effect for connections accepted after the reload.</summary>
        NewConnections,

        /// <summary>Needs a restart; a reload that changes it is refused as a whole.</summary>
        Restart,
    }

    internal sealed record Setting(string Property, string Key, Reloadability Reloadability, Func<BrokerOptions, object?> Read);

    /// <summary>The settings, by <see cref="BrokerOptions"/> property, with nats-server's config key for messages.</summary>
    public static IReadOnlyList<Setting> Settings { get; } =
    [
        new(nameof(BrokerOptions.Host), "host", Reloadability.Restart, o => o.Host),
        new(nameof(BrokerOptions.Port), "port", Reloadability.Restart, o => o.Port),
        new(nameof(BrokerOptions.ServerName), "server_name", Reloadability.Restart, o => o.ServerName),
        new(nameof(BrokerOptions.MaxPayload), "max_payload", Reloadability.Live, o => o.MaxPayload),
        new(nameof(BrokerOptions.MaxControlLine), "max_control_line", Reloadability.Live, o => o.MaxControlLine),
        new(nameof(BrokerOptions.MaxPending), "max_pending", Reloadability.NewConnections, o => o.MaxPending),
        new(nameof(BrokerOptions.WriteDeadline), "write_deadline", Reloadability.NewConnections, o => o.WriteDeadline),
        new(nameof(BrokerOptions.PingInterval), "ping_interval", Reloadability.Live, o => o.PingInterval),
        new(nameof(BrokerOptions.MaxPingsOutstanding), "ping_max", Reloadability.Live, o => o.MaxPingsOutstanding),
        new(nameof(BrokerOptions.MaxConnections), "max_connections", Reloadability.Live, o => o.MaxConnections),
        new(nameof(BrokerOptions.MaxSubscriptions), "max_subscriptions", Reloadability.Live, o => o.MaxSubscriptions),
        new(nameof(BrokerOptions.MaxSubTokens), "max_sub_tokens", Reloadability.Live, o => o.MaxSubTokens),
        new(nameof(BrokerOptions.NoHeaderSupport), "no_header_support", Reloadability.Restart, o => o.NoHeaderSupport),
        new(nameof(BrokerOptions.Authorization), "authorization", Reloadability.Live, o => JsonSerializer.Serialize(o.Authorization)),
        new(nameof(BrokerOptions.Monitoring), "http", Reloadability.Restart, o => JsonSerializer.Serialize(o.Monitoring)),
        new(nameof(BrokerOptions.MaxClosedClients), "max_closed_clients", Reloadability.Restart, o => o.MaxClosedClients),
        new(nameof(BrokerOptions.LameDuckDuration), "lame_duck_duration", Reloadability.Live, o => o.LameDuckDuration),
        new(nameof(BrokerOptions.LameDuckGracePeriod), "lame_duck_grace_period", Reloadability.Live, o => o.LameDuckGracePeriod),
    ];

    /// <summary>The settings whose values differ.</summary>
    public static IReadOnlyList<Setting> Changed(BrokerOptions current, BrokerOptions next)
        => [.. Settings.Where(s => !Equals(s.Read(current), s.Read(next)))];
}
