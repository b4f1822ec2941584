namespace Broker.Core;

/// <summary>One hub the broker connects to as a leaf node (an entry of nats-server's <c>leafnodes.remotes</c>).</summary>
public sealed class LeafRemoteOptions
{
    /// <summary>
    /// The hub's leaf node URLs, <c>nats-leaf://</c>, <c>nats://</c> or <c>tls://</c> to its leaf port, <c>ws://</c> or
    /// <c>wss://</c> to its <c>websocket</c> port (a user and password may be in the URL); tried in turn, together with
    /// the ones the hub announces. Default empty (a remote needs at least one).
    /// </summary>
    public IList<string> Urls { get; set; } = [];

    /// <summary>Whether the URLs are tried in the given order rather than shuffled (nats-server's <c>no_randomize</c>). Default false.</summary>
    public bool NoRandomize { get; set; }

    /// <summary>The local account the link is bound to (nats-server's <c>account</c>). Default <see langword="null"/>: <c>$G</c>.</summary>
    public string? Account { get; set; }

    /// <summary>
    /// A credentials file (user JWT and NKey seed) to authenticate with: the hub's nonce is signed with the seed
    /// (nats-server's <c>credentials</c>). Default <see langword="null"/>.
    /// </summary>
    public string? Credentials { get; set; }

    /// <summary>Subjects never received from the hub: no interest is sent for them (nats-server's <c>deny_imports</c>). Default empty.</summary>
    public IList<string> DenyImports { get; set; } = [];

    /// <summary>Subjects never sent to the hub (nats-server's <c>deny_exports</c>). Default empty.</summary>
    public IList<string> DenyExports { get; set; } = [];

    /// <summary>
    /// TLS settings (nats-server's <c>tls { }</c> of a remote): with them the link always speaks TLS. Default
    /// <see langword="null"/>: TLS only when the hub asks for it or the URL is <c>wss://</c>.
    /// </summary>
    public LeafRemoteTlsOptions? Tls { get; set; }

    /// <summary>
    /// Whether a <c>ws://</c> or <c>wss://</c> link asks the hub for permessage-deflate compression (nats-server's
    /// <c>ws_compression</c>), used when the hub's <c>websocket { compression: true }</c> agrees. Default false.
    /// </summary>
    public bool WebSocketCompression { get; set; }

    // Go's url.Redacted: the password, when there is one, as "xxxxx".
    private static string Redacted(Uri url)
    {
        var colon = url.UserInfo.IndexOf(':', StringComparison.Ordinal);
        var text = url.OriginalString.Trim();
        return colon < 0 ? text : text.Replace(url.UserInfo + "@", url.UserInfo[..colon] + ":xxxxx@", StringComparison.Ordinal);
    }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public LeafRemoteOptions Clone() => new()
    {
        Urls = [.. Urls],
        NoRandomize = NoRandomize,
        Account = Account,
        Credentials = Credentials,
        DenyImports = [.. DenyImports],
        DenyExports = [.. DenyExports],
        Tls = Tls?.Clone(),
        WebSocketCompression = WebSocketCompression,
    };

    /// <summary>Checks the remote: URLs that parse and that this broker can dial, an account that exists.</summary>
    /// <param name="options">The options the remote belongs to.</param>
    /// <exception cref="InvalidOperationException">The remote is invalid.</exception>
    public void Validate(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (Urls.Count == 0)
        {
            throw new InvalidOperationException("leafnodes: a remote needs at least one url");
        }

        foreach (var url in Urls)
        {
            if (!Uri.TryCreate(url.Trim(), UriKind.Absolute, out var uri) || string.IsNullOrEmpty(uri.Host))
            {
                throw new InvalidOperationException($"error parsing leafnode url [\"{url.Trim()}\"]");
            }

        }

        var parsed = Urls.Select(u => new Uri(u.Trim())).ToList();
        if (parsed.Select(u => u.Scheme is "ws" or "wss").Distinct().Count() > 1)
        {
            // nats-server's validateLeafNode, the URLs as Go's %q prints them with passwords redacted.
            var list = string.Join(" ", parsed.Select(u => "\"" + Redacted(u) + "\""));
            throw new InvalidOperationException($"remote leaf node configuration cannot have a mix of websocket and non-websocket urls: [{list}]");
        }

        if (Tls is { } tls)
        {
            LeafRemoteTlsOptions.CheckKeyPair(tls.CertFile, tls.KeyFile);
        }

        if (!AccountExists(options, Account))
        {
            throw new InvalidOperationException($"cannot find local account \"{Account}\" specified in leafnode remote");
        }

        foreach (var subject in DenyImports.Concat(DenyExports))
        {
            Internal.Auth.SubjectPatternSet.Create([subject], allowQueue: false);
        }
    }

    // nats-server validateLeafNode: $G and "" always exist, $SYS unless the system account is disabled or renamed.
    internal static bool AccountExists(BrokerOptions options, string? account)
    {
        account ??= Internal.Accounts.Account.GlobalName;
        return account.Length == 0 || account == Internal.Accounts.Account.GlobalName
            || options.Accounts.Any(a => a.Name == account)
            || (account == Internal.Accounts.Account.SystemDefaultName && options.SystemAccount is null && !options.NoSystemAccount);
    }
}
