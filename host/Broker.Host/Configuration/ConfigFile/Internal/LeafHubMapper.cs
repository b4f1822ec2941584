using System.Globalization;
using Broker.Core;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The hub keys of a <c>leafnodes</c> block (nats-server opts.go parseLeafNodes, parseLeafAuthorization,
/// parseLeafUsers) onto <see cref="LeafHubOptions"/>: <c>listen</c>/<c>port</c>/<c>host</c>, <c>authorization</c>
/// (<c>user</c>, <c>password</c>, <c>account</c>, <c>timeout</c>, <c>users</c>), <c>advertise</c> and
/// <c>no_advertise</c>, with nats-server's texts; <c>min_version</c> is ignored with a notice. The listener's
/// <c>tls</c> block is read with the remotes' by <see cref="LeafNodesMapper"/>.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="ignored">Collects notices.</param>
internal sealed class LeafHubMapper(ConfValueReader reader, ConfMappingBuilder output, IgnoredFeatures ignored)
{
    /// <summary>The feature <c>min_version</c>'s notice names.</summary>
    public const string MinVersionFeature = "Leaf node minimum version";

    /// <summary>Whether a block gave <c>authorization.timeout</c> (else it follows the TLS timeout).</summary>
    public bool AuthTimeoutSet { get; private set; }

    private static string Hub(string property) => Key(nameof(BrokerOptions.LeafNodes), nameof(LeafNodeOptions.Hub), property);

    /// <summary>Maps <paramref name="item"/> when it is a hub key of the block.</summary>
    /// <returns>Whether it was one.</returns>
    public bool TryMap(ConfEntry item)
    {
        switch (item.Key.ToLowerInvariant())
        {
            case "listen":
                ServerSettingsMapper.Listen(output, item, Hub(nameof(LeafHubOptions.Host)), Hub(nameof(LeafHubOptions.Port)), null);
                return true;
            case "port":
                reader.SetInt32(item, Hub(nameof(LeafHubOptions.Port)));
                return true;
            case "host" or "net":
                reader.SetString(item, Hub(nameof(LeafHubOptions.Host)));
                return true;
            case "authorization":
                if (reader.TryMap(item, out var map))
                {
                    Authorization(map);
                }

                return true;
            case "leafnode_advertise" or "advertise":
                reader.SetString(item, Hub(nameof(LeafHubOptions.Advertise)));
                return true;
            case "no_advertise":
                reader.SetBool(item, Hub(nameof(LeafHubOptions.NoAdvertise)));
                return true;
            case "min_version" or "minimum_version":
                ignored.Ignore(item, MinVersionFeature);
                return true;
            default:
                return false;
        }
    }

    private void Authorization(ConfMap block)
    {
        foreach (var field in block.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    reader.SetString(field, Hub(nameof(LeafHubOptions.User)));
                    break;
                case "pass" or "password":
                    reader.SetString(field, Hub(nameof(LeafHubOptions.Password)));
                    break;
                case "account":
                    reader.SetString(field, Hub(nameof(LeafHubOptions.Account)));
                    break;
                case "timeout":
                    // nats-server: an integer or a float of seconds; anything else is 1 second.
                    var seconds = field.Value switch
                    {
                        ConfInteger whole => whole.Value,
                        ConfFloat fraction => fraction.Value,
                        _ => 1.0,
                    };
                    output.Set(Hub(nameof(LeafHubOptions.AuthTimeout)), Format(TimeSpan.FromSeconds(seconds)));
                    AuthTimeoutSet = true;
                    break;
                case "users":
                    Users(field);
                    break;
                default:
                    reader.Unknown(field);
                    break;
            }
        }
    }

    private void Users(ConfEntry entry)
    {
        if (entry.Value is not ConfArray list)
        {
            output.Error(entry.KeyPosition, $"Expected users field to be an array, got {Scalar(entry.Value)}");
            return;
        }

        output.RemoveSection(Hub(nameof(LeafHubOptions.Users)));
        var index = 0;
        foreach (var item in list.Items)
        {
            if (item is not ConfMap user)
            {
                output.Error(item.Position, $"Expected user entry to be a map/struct, got {Scalar(item)}");
                continue;
            }

            var prefix = Hub(nameof(LeafHubOptions.Users)) + ":" + index.ToString(CultureInfo.InvariantCulture) + ":";
            index++;
            foreach (var field in user.Entries)
            {
                switch (field.Key.ToLowerInvariant())
                {
                    case "user" or "username":
                        reader.SetString(field, prefix + nameof(LeafUserOptions.User));
                        break;
                    case "pass" or "password":
                        reader.SetString(field, prefix + nameof(LeafUserOptions.Password));
                        break;
                    case "account":
                        reader.SetString(field, prefix + nameof(LeafUserOptions.Account));
                        break;
                    default:
                        reader.Unknown(field);
                        break;
                }
            }
        }
    }
}
