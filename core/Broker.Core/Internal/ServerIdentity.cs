using System.Security.Cryptography;

namespace Broker.Core.Internal;

/// <summary>Generates identifiers shaped like nats-server's (the server id itself is the server NKey's public key, see <see cref="BrokerCore.ServerKey"/>).</summary>
internal static class ServerIdentity
{
    private const string Base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    /// <summary>nats-server's invented no-auth user of <c>$G</c>: <c>nats-</c> and eight base-62 characters.</summary>
    public static string NewSystemOnlyNoAuthUser() =>
        "nats-" + RandomNumberGenerator.GetString("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 8);

    public static string RandomBase32(int length) => RandomNumberGenerator.GetString(Base32Alphabet, length);
}
