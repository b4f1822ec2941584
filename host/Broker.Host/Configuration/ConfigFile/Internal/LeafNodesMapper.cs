using Broker.Core;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>leafnodes</c> (or <c>leaf</c>) block (nats-server opts.go parseLeafNodes, parseRemoteLeafNodes) onto
/// <see cref="LeafNodeOptions"/>: <c>remotes</c> (<c>url</c>/<c>urls</c>, <c>no_randomize</c>, <c>account</c>,
/// <c>credentials</c>, <c>deny_imports</c>, <c>deny_exports</c>, <c>tls</c>) and <c>reconnect</c>, with nats-server's
/// texts; the keys of accepting leaf nodes (being a hub: <c>listen</c>, <c>authorization</c>, ...) go to
/// <see cref="LeafHubMapper"/>. <c>hub: true</c>, <c>ws_no_masking</c> and the TLS keys a spoke does not honour are
/// errors (the link would run otherwise than the file says).
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="permissions">Reads deny lists.</param>
/// <param name="ignored">Collects notices.</param>
internal sealed class LeafNodesMapper(ConfValueReader reader, ConfMappingBuilder output, PermissionsMapper permissions, IgnoredFeatures ignored)
{
    private readonly LeafHubMapper hub = new(reader, output, ignored);

    private int remotes;

    // The listener's TLS timeout, once its tls block is read (the default authorization timeout follows it).
    private TimeSpan? hubTlsTimeout;

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
                case "tls":
                    Tls(item, Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.Hub), nameof(LeafHubOptions.Tls)), hub: true);
                    break;
                default:
                    if (!hub.TryMap(item))
                    {
                        reader.Unknown(item);
                    }

                    break;
            }
        }

        if (hubTlsTimeout is { } tlsTimeout && !hub.AuthTimeoutSet)
        {
            // nats-server's getDefaultAuthTimeout: with TLS, the TLS timeout and a second more for the CONNECT.
            output.Set(Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.Hub), nameof(LeafHubOptions.AuthTimeout)), Format(tlsTimeout + TimeSpan.FromSeconds(1)));
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
                    Tls(field, prefix + ":" + nameof(LeafRemoteOptions.Tls), hub: false);
                    break;
                case "ws_compress" or "ws_compression" or "websocket_compress" or "websocket_compression":
                    reader.SetBool(field, prefix + ":" + nameof(LeafRemoteOptions.WebSocketCompression));
                    break;
                case "ws_no_masking" or "websocket_no_masking":
                    if (reader.TryBool(field, out var noMasking) && noMasking)
                    {
                        reader.NotYet(field, "unmasked WebSocket frames on leaf node remotes");
                    }

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

            output.Set(prefix + ":" + Format(index++), trimmed);
        }
    }

    // A remote's or the listener's (hub) tls block (nats-server parseTLS with isClientCtx for both): the same keys onto
    // LeafRemoteTlsOptions or LeafHubTlsOptions, whose names match; GenTLSConfig's checks are the options' own.
    private void Tls(ConfEntry field, string prefix, bool hub)
        => Tls(field, prefix, hub ? "on the leaf node listener's TLS" : "on a leaf node remote's TLS", hub, routes: false);

    /// <summary>
    /// A <c>tls { }</c> block of a link onto <see cref="LeafRemoteTlsOptions"/> (or <see cref="LeafHubTlsOptions"/>
    /// for the leaf listener, <paramref name="hub"/>) keys under <paramref name="prefix"/>: a leaf node remote's, the
    /// listener's, or the cluster's (<paramref name="routes"/>: <c>verify</c> is always on there, as nats-server forces
    /// it, and <c>verify_and_map</c> is refused); keys not offered are refused naming <paramref name="where"/>.
    /// </summary>
    internal void Tls(ConfEntry field, string prefix, string where, bool hub, bool routes)
    {
        if (!reader.TryMap(field, out var block))
        {
            return;
        }

        var timeout = LeafRemoteTlsOptions.DefaultTimeout;
        output.Set(prefix + ":" + nameof(LeafRemoteTlsOptions.Timeout), Format(timeout));
        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "cert_file" or "key_file" or "ca_file":
                    if (item.Value is ConfString file)
                    {
                        var name = item.Key.ToLowerInvariant() switch
                        {
                            "cert_file" => nameof(LeafRemoteTlsOptions.CertFile),
                            "key_file" => nameof(LeafRemoteTlsOptions.KeyFile),
                            _ => nameof(LeafRemoteTlsOptions.CaFile),
                        };
                        output.Set(prefix + ":" + name, file.Value);
                    }
                    else
                    {
                        output.Error(item.KeyPosition, $"error parsing tls config, expected '{item.Key.ToLowerInvariant()}' to be filename");
                    }

                    break;
                case "insecure":
                    TlsBool(item, prefix + ":" + nameof(LeafRemoteTlsOptions.Insecure));
                    break;
                case "verify_and_map" when routes && item.Value is ConfBool { Value: true }:
                    reader.NotYet(item, "routes authenticated by their certificate");
                    break;
                case "verify":
                    // A server's check of client certificates: a spoke, the TLS client, has none to make (Go ignores it there).
                    TlsBool(item, hub ? prefix + ":" + nameof(LeafHubTlsOptions.Verify) : null);
                    break;
                case "verify_and_map":
                    if (hub && item.Value is ConfBool { Value: true })
                    {
                        reader.NotYet(item, "leaf node users named by their TLS certificates (verify_and_map)");
                    }
                    else
                    {
                        TlsBool(item, null);
                    }

                    break;
                case "verify_cert_and_check_known_urls":
                    if (item.Value is ConfBool { Value: true })
                    {
                        output.Error(item.KeyPosition, "verify_cert_and_check_known_urls not supported in this context");
                    }
                    else
                    {
                        TlsBool(item, null);
                    }

                    break;
                case "timeout":
                    timeout = TlsTimeout(item, prefix + ":" + nameof(LeafRemoteTlsOptions.Timeout)) ?? timeout;
                    break;
                case "cipher_suites" or "curve_preferences" or "pinned_certs" or "connection_rate_limit" or "min_version":
                    reader.NotYet(item, where);
                    break;
                case "handshake_first" or "first" or "immediate":
                    reader.NotYet(item, "TLS before the hub's INFO, nats-server 2.10");
                    break;
                default:
                    if (!item.UsedAsVariable)
                    {
                        output.Error(item.KeyPosition, $"error parsing tls config, unknown field [\"{item.Key}\"]");
                    }

                    break;
            }
        }

        if (hub)
        {
            hubTlsTimeout = timeout;
        }
    }

    private void TlsBool(ConfEntry item, string? key)
    {
        if (item.Value is not ConfBool flag)
        {
            output.Error(item.KeyPosition, $"error parsing tls config, expected '{item.Key.ToLowerInvariant()}' to be a boolean");
        }
        else if (key is not null)
        {
            output.Set(key, Format(flag.Value));
        }
    }

    // Seconds (an integer or a fraction) or a Go duration; zero or less is the default. The timeout set, if any.
    private TimeSpan? TlsTimeout(ConfEntry item, string key)
    {
        double seconds;
        switch (item.Value)
        {
            case ConfInteger whole:
                seconds = whole.Value;
                break;
            case ConfFloat fraction:
                seconds = fraction.Value;
                break;
            case ConfString text:
                if (!Broker.Abstractions.ConfigSyntax.TryParseDuration(text.Value, out var duration, out var error))
                {
                    output.Error(item.KeyPosition, $"error parsing tls config, 'timeout' {error}");
                    return null;
                }

                seconds = duration.TotalSeconds;
                break;
            default:
                output.Error(item.KeyPosition, "error parsing tls config, 'timeout' wrong type");
                return null;
        }

        if (seconds <= 0)
        {
            return null;
        }

        output.Set(key, Format(TimeSpan.FromSeconds(seconds)));
        return TimeSpan.FromSeconds(seconds);
    }

    // nats-server's expandPath: a leading ~ is the home directory.
    private static string ExpandHome(string path)
        => path.StartsWith('~') ? Environment.GetFolderPath(Environment.SpecialFolder.UserProfile) + path[1..] : path;
}
