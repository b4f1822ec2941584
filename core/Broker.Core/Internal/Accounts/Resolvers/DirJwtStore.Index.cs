using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Accounts.Resolvers;

/// <summary>
/// The store's index (nats-server's <c>expirationTracker</c>): each JWT's hash and expiry, the least recently used
/// order, the XOR of the hashes, and the sweep that removes expired JWTs. Every member runs under <c>DirJwtStore.sync</c>.
/// </summary>
internal sealed partial class DirJwtStore
{
    private void Track(string publicKey, byte[] newHash, string token)
    {
        var expires = ttl > TimeSpan.Zero
            ? time.GetUtcNow() + ttl
            : GenericJwt.TryDecode(token, out var claims, out _) && claims.Expires > 0 ? DateTimeOffset.FromUnixTimeSeconds(claims.Expires) : DateTimeOffset.MaxValue;
        if (index.TryGetValue(publicKey, out var entry))
        {
            Xor(entry.Hash);
            entry.Hash = newHash;
            entry.Expires = expires;
        }
        else
        {
            index[publicKey] = new Entry { Hash = newHash, Expires = expires, Node = lru.AddLast(publicKey) };
        }

        Xor(newHash);
    }

    private void Untrack(string publicKey)
    {
        if (index.Remove(publicKey, out var entry))
        {
            Xor(entry.Hash);
            lru.Remove(entry.Node);
        }
    }

    // nats-server updateTrack: a use renews the ttl and, for the cache, moves the JWT to the back of the LRU.
    private void Touch(string publicKey)
    {
        if (index.TryGetValue(publicKey, out var entry))
        {
            if (ttl > TimeSpan.Zero)
            {
                entry.Expires = time.GetUtcNow() + ttl;
            }

            if (evictOnLimit)
            {
                lru.Remove(entry.Node);
                lru.AddLast(entry.Node);
            }
        }
    }

    private void Xor(byte[] value)
    {
        for (var i = 0; i < hash.Length; i++)
        {
            hash[i] ^= value[i];
        }
    }

    private void Sweep()
    {
        var now = time.GetUtcNow();
        lock (sync)
        {
            foreach (var (key, entry) in index.Where(e => e.Value.Expires <= now).ToList())
            {
                try
                {
                    File.Delete(Path.Combine(Directory, key + Extension));
                }
                catch (IOException)
                {
                    continue;
                }

                _ = entry;
                Untrack(key);
            }
        }
    }

    private sealed class Entry
    {
        public required byte[] Hash { get; set; }

        public DateTimeOffset Expires { get; set; }

        public required LinkedListNode<string> Node { get; init; }
    }
}
