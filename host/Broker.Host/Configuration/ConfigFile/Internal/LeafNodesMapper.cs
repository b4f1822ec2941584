using Broker.Core;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>leafnodes</c> (or <c>leaf</c>) block (nats-server opts.go parseLeafNodes, parseRemoteLeafNodes) onto
/// <see cref="LeafNodeOptions"/>: <c>remotes</c> (<c>url</c>/<c>urls</c>, <c>no_randomize</c>, <c>account</c>,
/// <c>credentials</c>, <c>deny_imports</c>, <c>deny_exports</c>) and <c>reconnect</c>, with nats-server's texts; the
/// keys of accepting leaf nodes (being a hub: <c>listen</c>, <c>authorization</c>, ...) go to <see cref="LeafHubMapper"/>.
/// A remote's <c>tls</c> block, <c>hub: true</c> and WebSocket URLs are errors (the link would run otherwise than the
/// file says).
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="permissions">Reads deny lists.</param>
/// <param name="ignored">Collects notices.</param>
internal sealed class LeafNodesMapper(ConfValueReader reader, ConfMappingBuilder output, PermissionsMapper permissions, IgnoredFeatures ignored)
{
    private readonly LeafHubMapper hub = new(reader, output, ignored);

    private int remotes;

    /// <summary>Whether <paramref name="key"/> (any letter case) is <c>leafnodes</c> or <c>leaf</c>.</summary>
    public static bool Reads(string key)
        => string.Equals(key, "leafnodes", StringComparison.OrdinalIgnoreCase) || string.Equals(key, "leaf", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps one <c>leafnodes</c> block; a later block's remotes replace an earlier one's, as nats-server's.</summary>
    public void Map(ConfEntry entry)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected map to define a leafnode, got {GoType(entry.Value)}");
            return;
        }

        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "remotes":
                    Remotes(item);
                    break;
                case "reconnect" or "reconnect_delay" or "reconnect_interval":
                    if (reader.TryInteger(item, out var seconds))
                    {
                        output.Set(Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.ReconnectInterval)), Format(TimeSpan.FromSeconds(seconds)));
                    }

                    break;
                default:
                    if (!hub.TryMap(item))
                    {
                        reader.Unknown(item);
                    }

                    break;
            }
        }
    }

    private void Remotes(ConfEntry entry)
    {
        if (entry.Value is not ConfArray list)
        {
            output.Error(entry.KeyPosition, $"Expected remotes field to be an array, got {GoType(entry.Value)}");
            return;
        }

        output.RemoveSection(Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.Remotes)));
        remotes = 0;
        foreach (var item in list.Items)
        {
            if (item is not ConfMap remote)
            {
                output.Error(item.Position, $"Expected remote leafnode entry to be a map/struct, got {Scalar(item)}");
                continue;
            }

            Remote(remote, Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.Remotes), Format(remotes++)));
        }
    }

    private void Remote(ConfMap remote, string prefix)
    {
        foreach (var field in remote.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "no_randomize" or "dont_randomize":
                    reader.SetBool(field, prefix + ":" + nameof(LeafRemoteOptions.NoRandomize));
                    break;
                case "url" or "urls":
                    Urls(field, prefix + ":" + nameof(LeafRemoteOptions.Urls));
                    break;
                case "account" or "local":
                    reader.SetString(field, prefix + ":" + nameof(LeafRemoteOptions.Account));
                    break;
                case "creds" or "credentials":
                    if (reader.TryString(field, out var path))
                    {
                        output.Set(prefix + ":" + nameof(LeafRemoteOptions.Credentials), ExpandHome(path));
                    }

                    break;
                case "deny_imports" or "deny_import":
                    permissions.Subjects(field, prefix + ":" + nameof(LeafRemoteOptions.DenyImports), allowQueue: false);
                    break;
                case "deny_exports" or "deny_export":
                    permissions.Subjects(field, prefix + ":" + nameof(LeafRemoteOptions.DenyExports), allowQueue: false);
                    break;
                case "hub":
                    if (reader.TryBool(field, out var hub) && hub)
                    {
                        reader.NotYet(field, "a remote that is the hub of the other side");
                    }

                    break;
                case "tls":
                    reader.NotYet(field, "TLS on leaf node remotes");
                    break;
                case "ws_compress" or "ws_compression" or "websocket_compress" or "websocket_compression" or "ws_no_masking" or "websocket_no_masking":
                    // Only meaningful with ws:// URLs, which are refused.
                    reader.TryBool(field, out _);
                    break;
                case "jetstream_cluster_migrate" or "js_cluster_migrate":
                    ignored.Ignore(field, "JetStream cluster migration");
                    break;
                default:
                    reader.Unknown(field);
                    break;
            }
        }
    }

    // A string or a list of strings; a repeated URL is a warning and skipped (parseURLs).
    private void Urls(ConfEntry field, string prefix)
    {
        List<(string Url, ConfPosition Position)> urls = [];
        switch (field.Value)
        {
            case ConfString single:
                urls.Add((single.Value, field.KeyPosition));
                break;
            case ConfArray list:
                var seen = new HashSet<string>(StringComparer.Ordinal);
                foreach (var item in list.Items)
                {
                    if (item is not ConfString text)
                    {
                        reader.TypeError(item.Position, item, "string");
                        return;
                    }

                    if (!seen.Add(text.Value))
                    {
                        output.Warning(item.Position, "Duplicate leafnode entry detected");
                        continue;
                    }

                    urls.Add((text.Value, item.Position));
                }

                break;
            default:
                output.Error(field.KeyPosition, $"Expected remote leafnode url to be an array or string, got {Scalar(field.Value)}");
                return;
        }

        var index = 0;
        foreach (var (url, position) in urls)
        {
            var trimmed = url.Trim();
            if (!Uri.TryCreate(trimmed, UriKind.Absolute, out var uri) || uri.Host.Length == 0)
            {
                output.Error(position, $"error parsing leafnode url [\"{trimmed}\"]");
                continue;
            }

            if (uri.Scheme is "ws" or "wss")
            {
                output.Error(position, $"\"{field.Key}\": not supported yet (WebSocket leaf node remotes, {uri.Scheme}://); ignoring it would route messages or admit clients differently than the file says");
                continue;
            }

            output.Set(prefix + ":" + Format(index++), trimmed);
        }
    }

    // nats-server's expandPath: a leading ~ is the home directory.
    private static string ExpandHome(string path)
        => path.StartsWith('~') ? Environment.GetFolderPath(Environment.SpecialFolder.UserProfile) + path[1..] : path;
}
