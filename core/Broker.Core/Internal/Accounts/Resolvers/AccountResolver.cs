using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts.Resolvers;

/// <summary>
/// Where operator mode's account JWTs come from (nats-server's <c>AccountResolver</c>): <see cref="MemoryResolver"/>
/// (<c>MEMORY</c>) or <see cref="DirResolver"/> (the nats-based <c>full</c> and <c>cache</c> resolvers).
/// </summary>
internal abstract class AccountResolver : IDisposable
{
    /// <summary>The JWT of account <paramref name="publicKey"/>, or false when the resolver has none.</summary>
    public abstract bool TryFetch(string publicKey, [NotNullWhen(true)] out string? token);

    public virtual void Dispose() => GC.SuppressFinalize(this);

    /// <summary>The resolver <paramref name="options"/> configures, holding its preloaded JWTs.</summary>
    /// <exception cref="InvalidOperationException">The directory cannot be used.</exception>
    public static AccountResolver Create(OperatorOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (options.Resolver is AccountResolverType.Full or AccountResolverType.Cache)
        {
            var resolver = DirResolver.Open(options.DirectoryResolver, options.Resolver == AccountResolverType.Cache);
            foreach (var (key, token) in options.ResolverPreload)
            {
                // nats-server configureResolver: Store, which for the directory keeps a newer JWT already there.
                resolver.Store.SaveIfNewer(key, token);
            }

            return resolver;
        }

        return new MemoryResolver(options.ResolverPreload);
    }
}

/// <summary>
/// nats-server's <c>MemAccResolver</c>: the preloaded JWTs. A claims update does not change them (nats-server updates
/// the live account only), so an account registered again after a restart starts from its preloaded JWT.
/// </summary>
internal sealed class MemoryResolver(IDictionary<string, string> preload) : AccountResolver
{
    private readonly ConcurrentDictionary<string, string> jwts = new(preload, StringComparer.Ordinal);

    public override bool TryFetch(string publicKey, [NotNullWhen(true)] out string? token) => jwts.TryGetValue(publicKey, out token);
}
