using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Security settings this broker cannot enforce (operator/JWT mode, resolvers, OCSP, trusted proxies, users inside
/// accounts): running without them would let in clients the file keeps out, so each is an error naming what is
/// missing. Accounts without users only partition subjects, which the broker does not yet do: a notice.
/// </summary>
/// <param name="reader">Reads the accounts block and reports the refusals.</param>
/// <param name="ignored">Where accounts without users are ignored.</param>
internal sealed class SecurityRefusals(ConfValueReader reader, IgnoredFeatures ignored)
{
    private static readonly Dictionary<string, string> Refused = new(StringComparer.OrdinalIgnoreCase)
    {
        ["operator"] = "operator mode (JWT authentication)",
        ["operators"] = "operator mode (JWT authentication)",
        ["root"] = "operator mode (JWT authentication)",
        ["roots"] = "operator mode (JWT authentication)",
        ["root_operator"] = "operator mode (JWT authentication)",
        ["root_operators"] = "operator mode (JWT authentication)",
        ["resolver"] = "account resolvers (JWT authentication)",
        ["account_resolver"] = "account resolvers (JWT authentication)",
        ["accounts_resolver"] = "account resolvers (JWT authentication)",
        ["resolver_tls"] = "account resolvers (JWT authentication)",
        ["resolver_preload"] = "account resolvers (JWT authentication)",
        ["resolver_pinned_accounts"] = "account resolvers (JWT authentication)",
        ["trusted"] = "trusted operator keys (JWT authentication)",
        ["trusted_keys"] = "trusted operator keys (JWT authentication)",
        ["default_sentinel"] = "JWT sentinels",
        ["ocsp"] = "OCSP stapling",
        ["ocsp_cache"] = "OCSP stapling",
        ["proxies"] = "trusted proxies",
    };

    /// <summary>Whether <paramref name="key"/> (any letter case) is <c>accounts</c> or a refused setting.</summary>
    public static bool Reads(string key) => IsAccounts(key) || Refused.ContainsKey(key);

    /// <summary>Maps a top-level entry if it is <c>accounts</c> or a refused setting.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (IsAccounts(entry.Key))
        {
            Accounts(entry);
            return true;
        }

        if (Refused.TryGetValue(entry.Key, out var refused))
        {
            reader.Forbidden(entry, refused);
            return true;
        }

        return false;
    }

    private static bool IsAccounts(string key) => string.Equals(key, "accounts", StringComparison.OrdinalIgnoreCase);

    // Users inside an account would authenticate clients we have no account for: an error.
    private void Accounts(ConfEntry entry)
    {
        if (!reader.TryMap(entry, out var accounts))
        {
            return;
        }

        var refused = false;
        foreach (var account in accounts.Entries)
        {
            if (account.Value is not ConfMap body)
            {
                continue;
            }

            foreach (var field in body.Entries)
            {
                if (field.Key.Equals("users", StringComparison.OrdinalIgnoreCase) || field.Key.Equals("nkey", StringComparison.OrdinalIgnoreCase))
                {
                    reader.Forbidden(field, "users and nkeys in accounts (multi-tenancy)");
                    refused = true;
                }
            }
        }

        if (!refused)
        {
            ignored.Ignore(entry, "Accounts (multi-tenancy)");
        }
    }
}
