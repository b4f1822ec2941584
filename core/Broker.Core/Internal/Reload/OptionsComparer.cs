using System.Globalization;
using System.Text.Json;
using Broker.Core.Auth;
using Broker.Core.Internal.Monitoring;

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
        new(nameof(BrokerOptions.MaxConnections), "max_connections", Reloadability.Live, o => Internal.Clients.ConnectionAdmission.Effective(o.MaxConnections)),
        new(nameof(BrokerOptions.MaxSubscriptions), "max_subscriptions", Reloadability.Live, o => o.MaxSubscriptions),
        new(nameof(BrokerOptions.MaxSubTokens), "max_sub_tokens", Reloadability.Live, o => o.MaxSubTokens),
        new(nameof(BrokerOptions.NoHeaderSupport), "no_header_support", Reloadability.Restart, o => o.NoHeaderSupport),
        new(nameof(BrokerOptions.Authorization), "authorization", Reloadability.Live, o => JsonSerializer.Serialize(o.Authorization)),
        new(nameof(BrokerOptions.Accounts), "accounts", Reloadability.Live, o => JsonSerializer.Serialize(o.Accounts)),
        new(nameof(BrokerOptions.Mappings), "accounts", Reloadability.Live, o => JsonSerializer.Serialize(o.Mappings)),
        new(nameof(BrokerOptions.SystemAccount), "system_account", Reloadability.Restart, o => o.SystemAccount),
        new(nameof(BrokerOptions.NoSystemAccount), "no_system_account", Reloadability.Restart, o => o.NoSystemAccount),
        new(nameof(BrokerOptions.Operator), "operator", Reloadability.Restart, o => JsonSerializer.Serialize(o.Operator)),
        new(nameof(BrokerOptions.Monitoring), "http", Reloadability.Restart, o => JsonSerializer.Serialize(o.Monitoring)),
        new(nameof(BrokerOptions.LeafNodes), "leafnodes", Reloadability.Restart, o => JsonSerializer.Serialize(o.LeafNodes)),
        new(nameof(BrokerOptions.Cluster), "cluster", Reloadability.Restart, o => JsonSerializer.Serialize(o.Cluster)),
        new(nameof(BrokerOptions.MaxClosedClients), "max_closed_clients", Reloadability.Restart, o => o.MaxClosedClients),
        new(nameof(BrokerOptions.LameDuckDuration), "lame_duck_duration", Reloadability.Live, o => o.LameDuckDuration),
        new(nameof(BrokerOptions.LameDuckGracePeriod), "lame_duck_grace_period", Reloadability.Live, o => o.LameDuckGracePeriod),
    ];

    /// <summary>The settings whose values differ.</summary>
    public static IReadOnlyList<Setting> Changed(BrokerOptions current, BrokerOptions next)
        => [.. Settings.Where(s => !Equals(s.Read(current), s.Read(next)))];

    /// <summary>Whether <c>authorization { auth_callout }</c> differs (nats-server refuses to reload it).</summary>
    public static bool AuthCalloutChanged(BrokerOptions current, BrokerOptions next) =>
        Json(current.Authorization.AuthCallout) != Json(next.Authorization.AuthCallout);

    /// <summary>
    /// What a changed setting now is, as nats-server logs it after <c>Reloaded: </c>: <c>max_payload = 1048576</c>,
    /// <c>ping_interval = 2m0s</c> (Go's forms), and for authorization which part changed (<c>authorization users</c>,
    /// <c>authorization token</c>...), never a secret.
    /// </summary>
    public static IEnumerable<string> Describe(Setting setting, BrokerOptions current, BrokerOptions next)
    {
        ArgumentNullException.ThrowIfNull(setting);
        if (setting.Property == nameof(BrokerOptions.Authorization))
        {
            return DescribeAuthorization(current.Authorization, next.Authorization);
        }

        // nats-server logs "Reloaded: accounts" alone: the accounts hold passwords. Top-level mappings are the global
        // account's there, so a change of them is logged the same way.
        if (setting.Property is nameof(BrokerOptions.Accounts) or nameof(BrokerOptions.Mappings))
        {
            return [setting.Key];
        }

        return [setting.Key + " = " + Format(setting.Read(next))];
    }

    private static List<string> DescribeAuthorization(AuthorizationOptions current, AuthorizationOptions next)
    {
        var changes = new List<string>();
        if (current.User != next.User)
        {
            changes.Add("authorization username");
        }

        if (current.Password != next.Password)
        {
            changes.Add("authorization password");
        }

        if (current.Token != next.Token)
        {
            changes.Add("authorization token");
        }

        if (current.Timeout != next.Timeout)
        {
            // nats-server keeps the timeout as float seconds and prints it with %v.
            changes.Add("authorization timeout = " + next.Timeout.TotalSeconds.ToString(CultureInfo.InvariantCulture));
        }

        if (Json(current.Users.Where(u => u.Nkey is null)) != Json(next.Users.Where(u => u.Nkey is null))
            || Json(current.DefaultPermissions) != Json(next.DefaultPermissions)
            || current.NoAuthUser != next.NoAuthUser)
        {
            changes.Add("authorization users");
        }

        if (Json(current.Users.Where(u => u.Nkey is not null)) != Json(next.Users.Where(u => u.Nkey is not null)))
        {
            changes.Add("authorization nkey users");
        }

        return changes;
    }

    private static string Json<T>(T value) => JsonSerializer.Serialize(value);

    // Go's %v of the value.
    private static string Format(object? value) => value switch
    {
        null => "",
        bool b => b ? "true" : "false",
        TimeSpan t => GoFormat.Duration(t),
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };
}
