namespace Broker.Core;

/// <summary>
/// Accepting leaf node connections: the broker as the hub of nats-server (or broker) spokes (nats-server's
/// <c>leafnodes { listen, authorization, advertise, no_advertise, tls }</c>). Default: not listening.
/// </summary>
public sealed class LeafHubOptions
{
    /// <summary>The host to listen on for spokes (nats-server's <c>leafnodes.host</c>). Default <see langword="null"/>: all interfaces.</summary>
    public string? Host { get; set; }

    /// <summary>
    /// The port to listen on for spokes (nats-server's <c>leafnodes.port</c>); 0 (the default) does not listen, -1
    /// listens on a free port.
    /// </summary>
    public int Port { get; set; }

    /// <summary>The <c>host:port</c> spokes are told to reconnect to (<c>leafnode_urls</c>), in place of the listen address. Default <see langword="null"/>.</summary>
    public string? Advertise { get; set; }

    /// <summary>Whether the listen address is left out of <c>leafnode_urls</c> (nats-server's <c>no_advertise</c>). Default false.</summary>
    public bool NoAdvertise { get; set; }

    /// <summary>The single spoke user (nats-server's <c>authorization.user</c>). Default <see langword="null"/>: the broker's client authorization applies.</summary>
    public string? User { get; set; }

    /// <summary>The single spoke user's password, plain or bcrypt (nats-server's <c>authorization.password</c>). Default <see langword="null"/>.</summary>
    public string? Password { get; set; }

    /// <summary>The account the single user (or a spoke without credentials) is bound to (<c>authorization.account</c>). Default <see langword="null"/>: <c>$G</c>.</summary>
    public string? Account { get; set; }

    /// <summary>
    /// How long a spoke may take to send its CONNECT (<c>authorization.timeout</c>). Default 2 seconds (a
    /// configuration file with <c>tls</c> and no <c>authorization.timeout</c> sets the TLS timeout plus 1 second, as
    /// nats-server does).
    /// </summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Spoke users, each bound to its account (<c>authorization.users</c>). Default empty.</summary>
    public IList<LeafUserOptions> Users { get; set; } = [];

    /// <summary>
    /// TLS on the listener (nats-server's <c>leafnodes.tls</c>). Default <see langword="null"/>: spokes connect in
    /// clear text.
    /// </summary>
    public LeafHubTlsOptions? Tls { get; set; }

    /// <summary>Whether the broker accepts leaf node connections.</summary>
    public bool IsEnabled => Port != 0;

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public LeafHubOptions Clone() => new()
    {
        Host = Host,
        Port = Port,
        Advertise = Advertise,
        NoAdvertise = NoAdvertise,
        User = User,
        Password = Password,
        Account = Account,
        AuthTimeout = AuthTimeout,
        Tls = Tls?.Clone(),
        Users = [.. Users.Select(u => new LeafUserOptions { User = u.User, Password = u.Password, Account = u.Account })],
    };

    /// <summary>Checks the hub's settings with nats-server's texts (<c>validateLeafNodeAuthOptions</c>, <c>validateLeafNode</c>).</summary>
    /// <param name="options">The options these belong to.</param>
    /// <exception cref="InvalidOperationException">A setting is invalid; the message says why.</exception>
    public void Validate(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Tls?.Validate();
        if (Users.Count > 0)
        {
            if (!string.IsNullOrEmpty(User))
            {
                throw new InvalidOperationException("can not have a single user/pass and a users array");
            }

            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var user in Users)
            {
                if (!seen.Add(user.User ?? string.Empty))
                {
                    throw new InvalidOperationException($"duplicate user \"{user.User}\" detected in leafnode authorization");
                }
            }
        }

        if (options.Operator.IsEnabled)
        {
            if (Users.Count > 0)
            {
                throw new InvalidOperationException("operator mode does not allow specifying user in leafnode config");
            }

            if (IsEnabled && !string.IsNullOrEmpty(Account) && !Internal.Accounts.Resolvers.DirJwtStore.IsAccountKey(Account))
            {
                throw new InvalidOperationException("operator mode and non account nkeys are incompatible");
            }

            return;
        }

        CheckAccount(options, Account);
        foreach (var user in Users)
        {
            CheckAccount(options, user.Account);
        }
    }

    private static void CheckAccount(BrokerOptions options, string? account)
    {
        if (!LeafRemoteOptions.AccountExists(options, account))
        {
            throw new InvalidOperationException($"cannot find local account \"{account}\" specified in leafnode authorization");
        }
    }
}

/// <summary>One spoke user of the hub (an entry of nats-server's <c>leafnodes.authorization.users</c>).</summary>
public sealed class LeafUserOptions
{
    /// <summary>The user name the spoke's CONNECT gives. Default <see langword="null"/>.</summary>
    public string? User { get; set; }

    /// <summary>The password, plain or bcrypt. Default <see langword="null"/>.</summary>
    public string? Password { get; set; }

    /// <summary>The account a link of this user is bound to. Default <see langword="null"/>: <c>$G</c>.</summary>
    public string? Account { get; set; }
}
