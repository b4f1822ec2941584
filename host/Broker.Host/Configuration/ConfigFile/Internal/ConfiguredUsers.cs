namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// What the file's <c>authorization</c> block and accounts have said about users so far, for nats-server's checks
/// across them: a user name or NKey appears once in the whole file, and a single user/password or a token excludes
/// users in accounts. Whichever block comes later in the file reports the conflict, at its own position, as
/// nats-server does when it reads them in that order.
/// </summary>
internal sealed class ConfiguredUsers
{
    // nats-server's setupUsersAndNKeysDuplicateCheckMap: names and NKeys share one set.
    private readonly HashSet<string> names = new(StringComparer.Ordinal);

    /// <summary>Whether the <c>authorization</c> block has a single user/password.</summary>
    public bool SingleUser { get; set; }

    /// <summary>Whether the <c>authorization</c> block has a token.</summary>
    public bool Token { get; set; }

    /// <summary>Whether any user (of any block) was added.</summary>
    public bool Any => names.Count > 0;

    /// <summary>Adds users; returns nats-server's message for each one already present.</summary>
    public List<string> Add(IEnumerable<ConfiguredUser> users)
    {
        var duplicates = new List<string>();
        foreach (var (name, nkey) in users)
        {
            if (!names.Add(name))
            {
                duplicates.Add(nkey ? $"Duplicate nkey \"{name}\" detected" : $"Duplicate user \"{name}\" detected");
            }
        }

        return duplicates;
    }
}
