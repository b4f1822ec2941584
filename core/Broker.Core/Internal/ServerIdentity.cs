using System.Security.Cryptography;

namespace Broker.Core.Internal;

/// <summary>Generates identifiers shaped like nats-server's (an upper-case base32 key starting with 'N').</summary>
internal static class ServerIdentity
{
    private const string Base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    /// <summary>A 56-character server id, like nats-server's public server nkey.</summary>
    public static string NewServerId() => "N" + RandomBase32(55);

    public static string RandomBase32(int length) => RandomNumberGenerator.GetString(Base32Alphabet, length);
}
