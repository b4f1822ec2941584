namespace Broker.Core.Auth;

/// <summary>
/// The nats-based account resolver's settings (nats-server <c>resolver: { type: full|cache, dir, allow_delete,
/// interval, limit, ttl, timeout }</c>), used when <see cref="OperatorOptions.Resolver"/> is
/// <see cref="AccountResolverType.Full"/> or <see cref="AccountResolverType.Cache"/>: account JWTs are kept one file
/// per account (<c>&lt;public key&gt;.jwt</c>) in <see cref="Directory"/> and pushed through the system account's
/// <c>$SYS.REQ.CLAIMS.UPDATE</c> requests.
/// </summary>
public sealed class DirectoryResolverOptions
{
    /// <summary>The directory holding the account JWTs; created when missing. Required (default null).</summary>
    public string? Directory { get; set; }

    /// <summary>
    /// Whether <c>$SYS.REQ.CLAIMS.DELETE</c> may remove accounts (a deleted JWT is renamed to <c>.jwt.deleted</c>).
    /// Full resolver only. Default <see langword="false"/>.
    /// </summary>
    public bool AllowDelete { get; set; }

    /// <summary>
    /// How often the full resolver compares its store with other servers' (<c>interval</c>). Zero means nats-server's
    /// default of one minute; with one server there is no one to compare with. Full resolver only. Default zero.
    /// </summary>
    public TimeSpan SyncInterval { get; set; }

    /// <summary>
    /// Most account JWTs kept: 0 means unlimited for the full resolver (a push beyond the limit fails with
    /// <c>jwt store is full</c>) and 1,000 for the cache, which evicts the least recently used. Default 0.
    /// </summary>
    public long Limit { get; set; }

    /// <summary>How long the cache keeps a JWT after its last use (<c>ttl</c>). Zero keeps it. Cache only. Default zero.</summary>
    public TimeSpan Ttl { get; set; }

    /// <summary>How long a lookup from other servers may take (<c>timeout</c>). Default 1.9 seconds, as nats-server.</summary>
    public TimeSpan FetchTimeout { get; set; } = TimeSpan.FromMilliseconds(1900);

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public DirectoryResolverOptions Clone() => (DirectoryResolverOptions)MemberwiseClone();

    /// <summary>Checks the settings for <paramref name="type"/> as nats-server's configuration parser does, with its texts.</summary>
    /// <param name="type">The resolver type these settings are for.</param>
    /// <exception cref="InvalidOperationException">A setting does not fit the type.</exception>
    public void Validate(AccountResolverType type)
    {
        if (type is not (AccountResolverType.Full or AccountResolverType.Cache))
        {
            return;
        }

        if (string.IsNullOrEmpty(Directory))
        {
            throw new InvalidOperationException("dir has no value and needs to point to a directory");
        }

        if (File.Exists(Directory))
        {
            throw new InvalidOperationException("dir needs to point to an accessible directory");
        }

        if (FetchTimeout <= TimeSpan.Zero)
        {
            throw new InvalidOperationException($"Fetch timeout {Internal.Monitoring.GoFormat.Duration(FetchTimeout)} is too smal");
        }

        if (type == AccountResolverType.Cache)
        {
            if (SyncInterval != TimeSpan.Zero)
            {
                throw new InvalidOperationException("CACHE does not accept sync");
            }

            if (AllowDelete)
            {
                throw new InvalidOperationException("CACHE does not accept allow_delete");
            }
        }
        else if (Ttl != TimeSpan.Zero)
        {
            throw new InvalidOperationException("FULL does not accept ttl");
        }
    }
}
