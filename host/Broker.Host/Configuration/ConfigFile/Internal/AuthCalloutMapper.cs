using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using NATS.NKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// <c>authorization { auth_callout { issuer, account, auth_users, xkey } }</c> (also <c>auth_hook</c>; nats-server
/// 2.10 opts.go <c>parseAuthCallout</c>) onto <see cref="AuthCalloutOptions"/> keys, with its texts: the issuer must be
/// a public account key and the xkey a public curve key, both issuer and auth users are required. That the account
/// and the auth users exist is checked when the broker starts (nats-server logs those at start as errors).
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class AuthCalloutMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    private static string Callout(string property) => Authorization(nameof(AuthorizationOptions.AuthCallout), property);

    /// <summary>Maps the <c>auth_callout</c> entry.</summary>
    public void Map(ConfEntry entry)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected authorization callout to be a map/struct, got {entry.Value}");
            return;
        }

        var hasIssuer = false;
        var hasUsers = false;
        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "issuer":
                    if (!reader.TryString(item, out var issuer))
                    {
                        return;
                    }

                    if (!IsKey(PrefixByte.Account, issuer))
                    {
                        output.Error(item.KeyPosition, $"Expected callout user to be a valid public account nkey, got \"{issuer}\"");
                        return;
                    }

                    output.Set(Callout(nameof(AuthCalloutOptions.Issuer)), issuer);
                    hasIssuer = true;
                    break;
                case "account" or "acc":
                    reader.SetString(item, Callout(nameof(AuthCalloutOptions.Account)));
                    break;
                case "auth_users" or "users":
                    if (Users(item) is not { } count)
                    {
                        return;
                    }

                    hasUsers = count > 0;
                    break;
                case "xkey" or "key":
                    if (!reader.TryString(item, out var xkey))
                    {
                        return;
                    }

                    if (!IsKey(PrefixByte.Curve, xkey))
                    {
                        output.Error(item.KeyPosition, $"Expected callout xkey to be a valid public xkey, got \"{xkey}\"");
                        return;
                    }

                    output.Set(Callout(nameof(AuthCalloutOptions.XKey)), xkey);
                    break;
                default:
                    if (!item.UsedAsVariable)
                    {
                        output.Error(item.KeyPosition, $"Unknown field \"{item.Key}\" parsing authorization callout");
                    }

                    break;
            }
        }

        if (!hasIssuer)
        {
            output.Error(entry.KeyPosition, "Authorization callouts require an issuer to be specified");
        }
        else if (!hasUsers)
        {
            output.Error(entry.KeyPosition, "Authorization callouts require authorized users to be specified");
        }
    }

    // An array of strings, how many (null when refused); nats-server names the Go type of the configuration token otherwise.
    private int? Users(ConfEntry item)
    {
        if (item.Value is not ConfArray array)
        {
            output.Error(item.KeyPosition, "Expected auth_users field to be an array, got *conf.token");
            return null;
        }

        var index = 0;
        foreach (var user in array.Items)
        {
            if (user is not ConfString name)
            {
                reader.TypeError(user.Position, user, "string");
                return null;
            }

            output.Set(Callout(nameof(AuthCalloutOptions.AuthUsers)) + ":" + Format(index++), name.Value);
        }

        return index;
    }

    // NATS.NKeys throws for a key with a bad checksum or length rather than answering false.
    private static bool IsKey(PrefixByte prefix, string key)
    {
        try
        {
            return KeyPair.IsValidPublicKey(prefix, key);
        }
        catch (Exception ex) when (ex is NKeysException or ArgumentException or FormatException or IndexOutOfRangeException)
        {
            return false;
        }
    }
}
