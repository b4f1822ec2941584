using System.Security.Cryptography;

namespace Broker.Core.Internal;

/// <summary>Generates identifiers shaped like nats-server's (an upper-case base32 key starting with 'N').</summary>
internal static class ServerIdentity
{
    private const string Base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    /// <summary>A 56-character server id, like nats-server's public server nkey.</summary>
    public static string NewServerId() => "N" + RandomBase32(55);

    /// <summary>nats-server's invented no-auth user of <c>$G</c>: <c>nats-</c> and eight base-62 characters.</summary>
    public static string NewSystemOnlyNoAuthUser() =>
        "nats-" + RandomNumberGenerator.GetString("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 8);

    public static string RandomBase32(int length) => RandomNumberGenerator.GetString(Base32Alphabet, length);
}
