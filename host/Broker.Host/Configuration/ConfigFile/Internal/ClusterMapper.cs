using Broker.Core;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>cluster</c> block (nats-server opts.go parseCluster) onto <see cref="ClusterOptions"/>: <c>name</c>,
/// <c>listen</c> (or <c>host</c>/<c>net</c> and <c>port</c>), <c>routes</c>, <c>authorization</c> (one user and
/// password, <c>timeout</c>), <c>no_advertise</c>, <c>connect_retries</c>, <c>tls</c> (a leaf node remote's keys, read
/// by <see cref="LeafNodesMapper"/>), <c>permissions</c> (<c>import</c>/<c>export</c> as a user's <c>publish</c>/<c>subscribe</c>,
/// read by <see cref="PermissionsMapper"/>) and <c>advertise</c>/<c>cluster_advertise</c>, with nats-server's texts.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="authorization">Reads <c>timeout</c> as the top-level authorization's.</param>
/// <param name="permissions">Reads <c>permissions</c>.</param>
/// <param name="links">Reads <c>tls</c> as a leaf node remote's.</param>
internal sealed class ClusterMapper(ConfValueReader reader, ConfMappingBuilder output, AuthorizationMapper authorization, PermissionsMapper permissions, LeafNodesMapper links)
{
    /// <summary>Whether <paramref name="key"/> (any letter case) is <c>cluster</c>.</summary>
    public static bool Reads(string key) => string.Equals(key, "cluster", StringComparison.OrdinalIgnoreCase);

    private static string Cluster(string name) => Key(nameof(BrokerOptions.Cluster), name);

    /// <summary>Maps one <c>cluster</c> block.</summary>
    public void Map(ConfEntry entry)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected map to define cluster, got {GoType(entry.Value)}");
            return;
        }

        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "name":
                    reader.SetString(item, Cluster(nameof(ClusterOptions.Name)));
                    break;
                case "listen":
                    ServerSettingsMapper.Listen(output, item, Cluster(nameof(ClusterOptions.Host)), Cluster(nameof(ClusterOptions.Port)), null);
                    break;
                case "port":
                    if (reader.TryInteger(item, out var port))
                    {
                        output.Set(Cluster(nameof(ClusterOptions.Port)), Format(port));
                    }

                    break;
                case "host" or "net":
                    reader.SetString(item, Cluster(nameof(ClusterOptions.Host)));
                    break;
                case "authorization":
                    Authorization(item);
                    break;
                case "routes":
                    Routes(item);
                    break;
                case "no_advertise":
                    reader.SetBool(item, Cluster(nameof(ClusterOptions.NoAdvertise)));
                    break;
                case "connect_retries":
                    if (reader.TryInteger(item, out var retries))
                    {
                        output.Set(Cluster(nameof(ClusterOptions.ConnectRetries)), Format(retries));
                    }

                    break;
                case "tls":
                    links.Tls(item, Cluster(nameof(ClusterOptions.Tls)), "on routes' TLS", hub: false, routes: true);
                    break;
                case "permissions":
                    Permissions(item);
                    break;
                case "cluster_advertise" or "advertise":
                    if (item.Value is ConfString advertise)
                    {
                        output.Set(Cluster(nameof(ClusterOptions.Advertise)), advertise.Value);
                    }
                    else
                    {
                        output.Error(item.KeyPosition, $"interface conversion: interface {{}} is {GoType(item.Value)}, not string");
                    }

                    break;
                default:
                    reader.Unknown(item);
                    break;
            }
        }
    }

    // parseUserPermissions, without dynamic responses (nats-server's text).
    private void Permissions(ConfEntry entry)
    {
        if (entry.Value is ConfMap block && block.Entries.Any(e => e.Key.ToLowerInvariant() is "allow_responses" or "publish_allow_responses"))
        {
            output.Error(entry.KeyPosition, "Cluster permissions do not support dynamic responses");
            return;
        }

        permissions.Map(entry, Cluster(nameof(ClusterOptions.Permissions)));
    }

    // parseAuthorization, then: one user, no token (nats-server's texts).
    private void Authorization(ConfEntry entry)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected a map for authorization, got {GoType(entry.Value)}");
            return;
        }

        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    reader.SetString(item, Cluster(nameof(ClusterOptions.Username)));
                    break;
                case "pass" or "password":
                    reader.SetString(item, Cluster(nameof(ClusterOptions.Password)));
                    break;
                case "token":
                    output.Error(entry.KeyPosition, "Cluster authorization does not support tokens");
                    return;
                case "users":
                    output.Error(entry.KeyPosition, "Cluster authorization does not allow multiple users");
                    return;
                case "timeout":
                    authorization.Timeout(item, Cluster(nameof(ClusterOptions.AuthTimeout)));
                    break;
                case "permissions":
                    reader.NotYet(item, "route permissions");
                    break;
                default:
                    reader.Unknown(item);
                    break;
            }
        }
    }

    // parseURLs: a list of strings; a repeated one is a warning and skipped, one that does not parse an error.
    private void Routes(ConfEntry entry)
    {
        if (entry.Value is not ConfArray list)
        {
            reader.TypeError(entry.KeyPosition, entry.Value, "[]interface {}");
            return;
        }

        output.RemoveSection(Cluster(nameof(ClusterOptions.Routes)));
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var index = 0;
        foreach (var item in list.Items)
        {
            if (item is not ConfString text)
            {
                reader.TypeError(item.Position, item, "string");
                return;
            }

            if (!seen.Add(text.Value))
            {
                output.Warning(item.Position, "Duplicate route entry detected");
                continue;
            }

            var trimmed = text.Value.Trim();
            if (!Uri.TryCreate(trimmed, UriKind.Absolute, out var uri) || uri.Host.Length == 0)
            {
                output.Error(item.Position, $"error parsing route url [\"{trimmed}\"]");
                continue;
            }

            output.Set(Cluster(nameof(ClusterOptions.Routes)) + ":" + Format(index++), trimmed);
        }
    }
}
