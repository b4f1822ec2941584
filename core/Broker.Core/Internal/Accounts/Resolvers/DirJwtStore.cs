using System.Security.Cryptography;
using System.Text;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.Core.Internal.Accounts.Resolvers;

/// <summary>
/// nats-server's <c>DirJWTStore</c> as its nats-based resolvers use it: one file per account,
/// <c>&lt;directory&gt;/&lt;public key&gt;.jwt</c> (sharding off), read back at start; an index of the files with their
/// SHA-256, whose XOR is the store's hash (<c>$SYS.REQ.CLAIMS.PACK</c> compares it); a limit on the number of JWTs
/// (the full resolver refuses beyond it, the cache evicts the least recently used); an expiry sweep that removes
/// files whose JWT expired, or with a ttl (cache) those not used for that long. Files are written 0640 in a 0750
/// directory, as nats-server's. Its lock, <c>DirJwtStore.sync</c>, is a leaf.
/// </summary>
internal sealed partial class DirJwtStore : IDisposable
{
    public const string Extension = ".jwt";

    private readonly Lock sync = new();
    private readonly Dictionary<string, Entry> index = new(StringComparer.Ordinal);
    private readonly LinkedList<string> lru = new();
    private readonly byte[] hash = new byte[SHA256.HashSizeInBytes];
    private readonly long limit;
    private readonly bool evictOnLimit;
    private readonly TimeSpan ttl;
    private readonly TimeProvider time;
    private readonly ITimer sweeper;

    /// <param name="directory">The directory; created when missing.</param>
    /// <param name="limit">Most JWTs kept (0 or less: unlimited).</param>
    /// <param name="evictOnLimit">Evict the least recently used at the limit (cache) rather than refuse (full).</param>
    /// <param name="delete">What a delete does.</param>
    /// <param name="ttl">How long an unused JWT is kept (zero: until its own expiry).</param>
    /// <param name="time">The clock.</param>
    public DirJwtStore(string directory, long limit, bool evictOnLimit, DirDeleteMode delete, TimeSpan ttl, TimeProvider? time = null)
    {
        Directory = Path.GetFullPath(directory);
        this.limit = limit <= 0 ? long.MaxValue : limit;
        this.evictOnLimit = evictOnLimit;
        DeleteMode = delete;
        this.ttl = ttl;
        this.time = time ?? TimeProvider.System;
        if (!System.IO.Directory.Exists(Directory))
        {
            CreateDirectory(Directory);
        }

        foreach (var path in JwtFiles())
        {
            var token = File.ReadAllText(path);
            Track(Path.GetFileName(path)[..^Extension.Length], SHA256.HashData(Encoding.UTF8.GetBytes(token)), token);
        }

        // nats-server: the sweep runs every ttl/2 with a ttl, at most once a minute.
        var check = ttl > TimeSpan.Zero ? ttl / 2 : TimeSpan.FromMinutes(1);
        if (check <= TimeSpan.Zero || check > TimeSpan.FromMinutes(1))
        {
            check = TimeSpan.FromMinutes(1);
        }

        sweeper = this.time.CreateTimer(static s => ((DirJwtStore)s!).Sweep(), this, check, check);
    }

    /// <summary>The store's directory, absolute.</summary>
    public string Directory { get; }

    public DirDeleteMode DeleteMode { get; }

    /// <summary>The JWT of <paramref name="publicKey"/>, or null when the store has none (marks it used).</summary>
    public string? Load(string publicKey)
    {
        if (PathFor(publicKey) is not { } path)
        {
            return null;
        }

        lock (sync)
        {
            string token;
            try
            {
                token = File.ReadAllText(path);
            }
            catch (IOException)
            {
                return null;
            }
            catch (UnauthorizedAccessException)
            {
                return null;
            }

            Touch(publicKey);
            return token;
        }
    }

    /// <summary>
    /// Writes <paramref name="token"/> as <paramref name="publicKey"/>'s JWT (nats-server <c>save</c>): whether it
    /// changed the store, or an error (<c>invalid public key</c>, <c>jwt store is full</c>, an I/O error).
    /// </summary>
    public bool Save(string publicKey, string token, out string? error)
    {
        if (PathFor(publicKey) is not { } path)
        {
            error = "invalid public key";
            return false;
        }

        lock (sync)
        {
            return Write(path, publicKey, token, out error);
        }
    }

    /// <summary>
    /// Writes <paramref name="token"/> unless the store holds the same JWT or one issued later (nats-server
    /// <c>saveIfNewer</c>, used for preloads); whether it changed the store.
    /// </summary>
    public bool SaveIfNewer(string publicKey, string token)
    {
        if (PathFor(publicKey) is not { } path || !GenericJwt.TryDecode(token, out var incoming, out _))
        {
            return false;
        }

        lock (sync)
        {
            if (File.Exists(path) && GenericJwt.TryDecode(File.ReadAllText(path), out var existing, out _))
            {
                if (existing.Id == incoming.Id || existing.IssuedAt > incoming.IssuedAt
                    || incoming.Subject != publicKey || existing.Subject != incoming.Subject)
                {
                    return false;
                }
            }

            return Write(path, publicKey, token, out _);
        }
    }

    /// <summary>
    /// Deletes <paramref name="publicKey"/>'s JWT (renamed to <c>.jwt.deleted</c>, or removed): true when a JWT was
    /// deleted, false when there was none; an error when the store does not delete.
    /// </summary>
    public bool Delete(string publicKey, out string? error)
    {
        error = null;
        if (DeleteMode == DirDeleteMode.None)
        {
            error = "store is not set up to for delete";
            return false;
        }

        if (PathFor(publicKey) is not { } path)
        {
            return false;
        }

        lock (sync)
        {
            try
            {
                if (!File.Exists(path))
                {
                    return false;
                }

                if (DeleteMode == DirDeleteMode.Rename)
                {
                    File.Move(path, path + ".deleted", overwrite: true);
                }
                else
                {
                    File.Delete(path);
                }
            }
            catch (IOException ex)
            {
                error = ex.Message;
                return false;
            }

            Untrack(publicKey);
            return true;
        }
    }

    /// <summary>
    /// The indexed JWTs in directory order, without those whose JWT expired (nats-server <c>PackWalk</c>): what
    /// <c>$SYS.REQ.CLAIMS.LIST</c> and <c>.PACK</c> answer.
    /// </summary>
    public List<(string Key, string Token)> Walk()
    {
        var result = new List<(string, string)>();
        var now = time.GetUtcNow().ToUnixTimeSeconds();
        foreach (var path in JwtFiles())
        {
            var key = Path.GetFileName(path)[..^Extension.Length];
            lock (sync)
            {
                if (!index.ContainsKey(key))
                {
                    continue;
                }
            }

            string token;
            try
            {
                token = File.ReadAllText(path);
            }
            catch (IOException)
            {
                continue;
            }

            if (GenericJwt.TryDecode(token, out var claims, out _) && claims.Expires > 0 && claims.Expires < now)
            {
                continue;
            }

            result.Add((key, token));
        }

        return result;
    }

    /// <summary>The XOR of the indexed JWTs' SHA-256 (nats-server <c>Hash</c>).</summary>
    public byte[] Hash()
    {
        lock (sync)
        {
            return (byte[])hash.Clone();
        }
    }

    public void Dispose() => sweeper.Dispose();

    private static void CreateDirectory(string path)
    {
        if (OperatingSystem.IsWindows())
        {
            System.IO.Directory.CreateDirectory(path);
        }
        else
        {
            System.IO.Directory.CreateDirectory(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupExecute);
        }
    }

    // nats-server pathForKey: any valid public nkey, one file in the directory (sharding off).
    private string? PathFor(string publicKey) =>
        publicKey.Length >= 2 && IsPublicKey(publicKey) ? Path.Combine(Directory, publicKey + Extension) : null;

    /// <summary>Whether <paramref name="key"/> is a valid public account NKey (false, not an exception, for any text).</summary>
    public static bool IsAccountKey(string key) => IsKey(key, PrefixByte.Account);

    private static bool IsPublicKey(string key) =>
        IsKey(key, PrefixByte.Account) || IsKey(key, PrefixByte.Operator) || IsKey(key, PrefixByte.User) || IsKey(key, PrefixByte.Server) || IsKey(key, PrefixByte.Cluster);

    private static bool IsKey(string key, PrefixByte prefix)
    {
        try
        {
            return KeyPair.IsValidPublicKey(prefix, key);
        }
        catch (NKeysException)
        {
            return false;
        }
        catch (ArgumentException)
        {
            return false;
        }
        catch (FormatException)
        {
            return false;
        }
    }

    private List<string> JwtFiles()
    {
        // filepath.Walk's lexical order.
        var files = System.IO.Directory.EnumerateFiles(Directory, "*", SearchOption.AllDirectories)
            .Where(p => p.EndsWith(Extension, StringComparison.Ordinal))
            .ToList();
        files.Sort(StringComparer.Ordinal);
        return files;
    }

    // Under sync.
    private bool Write(string path, string publicKey, string token, out string? error)
    {
        error = null;
        var newHash = SHA256.HashData(Encoding.UTF8.GetBytes(token));
        if (index.TryGetValue(publicKey, out var existing))
        {
            Touch(publicKey);
            if (existing.Hash.AsSpan().SequenceEqual(newHash))
            {
                return false;
            }
        }
        else if (index.Count >= limit)
        {
            if (!evictOnLimit)
            {
                error = "jwt store is full";
                return false;
            }

            var oldest = lru.First!.Value;
            try
            {
                File.Delete(Path.Combine(Directory, oldest + Extension));
            }
            catch (IOException ex)
            {
                error = ex.Message;
                return false;
            }

            Untrack(oldest);
        }

        try
        {
            if (!System.IO.Directory.Exists(Directory))
            {
                CreateDirectory(Directory);
            }

            File.WriteAllText(path, token);
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);
            }
        }
        catch (IOException ex)
        {
            error = ex.Message;
            return false;
        }

        Track(publicKey, newHash, token);
        return true;
    }
}

/// <summary>What deleting a JWT from a <see cref="DirJwtStore"/> does (nats-server <c>deleteType</c>).</summary>
internal enum DirDeleteMode
{
    /// <summary>Deleting is refused (full resolver without <c>allow_delete</c>).</summary>
    None,

    /// <summary>The file is renamed to <c>.jwt.deleted</c> (full resolver with <c>allow_delete</c>).</summary>
    Rename,

    /// <summary>The file is removed (cache).</summary>
    Hard,
}
