using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Security settings this broker cannot enforce (resolver TLS and pinned accounts, JWT sentinels, OCSP, trusted
/// proxies; operator mode itself is <see cref="OperatorMapper"/>'s): running
/// without them would let in clients the file keeps out, so each is an error naming what is missing.
/// </summary>
/// <param name="reader">Reports the refusals.</param>
internal sealed class SecurityRefusals(ConfValueReader reader)
{
    private static readonly Dictionary<string, string> Refused = new(StringComparer.OrdinalIgnoreCase)
    {
        ["resolver_tls"] = "account resolvers (JWT authentication)",
        ["resolver_pinned_accounts"] = "account resolvers (JWT authentication)",
        ["default_sentinel"] = "JWT sentinels",
        ["ocsp"] = "OCSP stapling",
        ["ocsp_cache"] = "OCSP stapling",
        ["proxies"] = "trusted proxies",
    };

    /// <summary>Whether <paramref name="key"/> (any letter case) is a refused setting.</summary>
    public static bool Reads(string key) => Refused.ContainsKey(key);

    /// <summary>Refuses a top-level entry if it is a refused setting.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (Refused.TryGetValue(entry.Key, out var refused))
        {
            reader.Forbidden(entry, refused);
            return true;
        }

        return false;
    }
}
