using NATS.NKeys;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>nats-server's checks of public NKeys written in the file (nkeys.IsValidPublicUserKey, ...AccountKey).</summary>
internal static class PublicKeys
{
    /// <summary>Whether <paramref name="key"/> is a public user key (<c>U...</c>).</summary>
    public static bool IsUserKey(string key) => IsValid(PrefixByte.User, key);

    /// <summary>Whether <paramref name="key"/> is a public account key (<c>A...</c>).</summary>
    public static bool IsAccountKey(string key) => IsValid(PrefixByte.Account, key);

    // NATS.NKeys throws for a key with a bad checksum or length rather than answering false.
    private static bool IsValid(PrefixByte prefix, string key)
    {
        try
        {
            return KeyPair.IsValidPublicKey(prefix, key);
        }
        catch (Exception ex) when (ex is NKeysException or ArgumentException or FormatException)
        {
            return false;
        }
    }
}
