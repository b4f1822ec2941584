using System.Diagnostics.CodeAnalysis;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts.Resolvers;

/// <summary>
/// nats-server's nats-based resolvers on one server: <c>DirAccResolver</c> (<c>full</c>: every pushed account JWT
/// kept, deletes with <c>allow_delete</c>) and <c>CacheDirAccResolver</c> (<c>cache</c>: least recently used evicted
/// beyond the limit, default 1,000, updates taken only for accounts in use). A fetch reads the directory; nats-server
/// then asks other servers with <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CLAIMS.LOOKUP</c>, which on one server nobody
/// answers, so the fetch fails at once here rather than after <see cref="DirectoryResolverOptions.FetchTimeout"/>.
/// </summary>
internal sealed class DirResolver : AccountResolver
{
    private DirResolver(DirJwtStore store, bool isCache)
    {
        Store = store;
        IsCache = isCache;
    }

    public DirJwtStore Store { get; }

    /// <summary>Whether this is the cache (<c>type: cache</c>) rather than the full resolver.</summary>
    public bool IsCache { get; }

    /// <summary>Opens the resolver's directory (created when missing) and indexes the JWTs in it.</summary>
    /// <exception cref="InvalidOperationException">The directory cannot be used.</exception>
    public static DirResolver Open(DirectoryResolverOptions options, bool cache)
    {
        ArgumentNullException.ThrowIfNull(options);
        try
        {
            var store = cache
                ? new DirJwtStore(options.Directory!, options.Limit <= 0 ? 1_000 : options.Limit, evictOnLimit: true, DirDeleteMode.Hard, options.Ttl)
                : new DirJwtStore(options.Directory!, options.Limit, evictOnLimit: false, options.AllowDelete ? DirDeleteMode.Rename : DirDeleteMode.None, TimeSpan.Zero);
            return new DirResolver(store, cache);
        }
        catch (IOException ex)
        {
            throw new InvalidOperationException(ex.Message, ex);
        }
        catch (UnauthorizedAccessException ex)
        {
            throw new InvalidOperationException(ex.Message, ex);
        }
    }

    public override bool TryFetch(string publicKey, [NotNullWhen(true)] out string? token)
    {
        token = Store.Load(publicKey);
        return token is not null;
    }

    public override void Dispose()
    {
        Store.Dispose();
        base.Dispose();
    }
}
