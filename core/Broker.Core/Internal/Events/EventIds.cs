namespace Broker.Core.Internal.Events;

/// <summary>
/// Event ids: 22 random base-62 characters, as nats-server's NUIDs look. Compiled into the JetStream plugin too (its
/// advisories' ids), which reaches Broker.Core only through the contract.
/// </summary>
internal static class EventIds
{
    private const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    public static string Next() => System.Security.Cryptography.RandomNumberGenerator.GetString(Alphabet, 22);
}
