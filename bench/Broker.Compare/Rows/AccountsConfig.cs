using System.Globalization;
using System.Text;

namespace Broker.Compare.Rows;

/// <summary>
/// The <c>--accounts N</c> configuration (issue 20, stage 8): every chosen row runs with N accounts on both servers.
/// A row without accounts of its own gets the account <c>BENCH</c> (its anonymous connections land there through
/// <c>no_auth_user: bench</c>; with JetStream in the row's configuration, <c>jetstream: enabled</c>, since
/// nats-server gives <c>$G</c> no JetStream once accounts are configured) and N-1 idle accounts <c>IDLE1</c> ...;
/// a row with accounts of its own (the import rows) keeps them and gets N-1 idle accounts beside them. Each idle
/// account holds <see cref="IdleSubscriber.SubscriptionsPerAccount"/> subscriptions on the row's own subjects (see
/// <see cref="IdleSubscriber"/>), so isolation has something to skip.
/// </summary>
internal static class AccountsConfig
{
    /// <summary>The user (and password) of idle account <paramref name="index"/> (1-based).</summary>
    public static string IdleUser(int index) => "idle" + index.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// <paramref name="config"/> (the row's configuration, or <see langword="null"/>) with the accounts of
    /// <paramref name="accounts"/>; unchanged when <paramref name="accounts"/> is 0 (no <c>--accounts</c>).
    /// </summary>
    public static string? Apply(string? config, int accounts)
    {
        if (accounts <= 0)
        {
            return config;
        }

        var idle = new StringBuilder();
        for (var i = 1; i < accounts; i++)
        {
            var user = IdleUser(i);
            idle.Append(CultureInfo.InvariantCulture, $"  IDLE{i}: {{ users: [ {{ user: {user}, password: {user} }} ] }}\n");
        }

        const string Opening = "accounts {\n";
        var text = (config ?? string.Empty).ReplaceLineEndings("\n");
        var existing = text.IndexOf(Opening, StringComparison.Ordinal);
        if (existing >= 0)
        {
            // The row's own accounts (and its no_auth_user) stay; the idle ones join them in the same block (a second
            // accounts block would replace the first in nats-server's parser).
            return text.Insert(existing + Opening.Length, idle.ToString());
        }

        var jetStream = text.Contains("jetstream {", StringComparison.Ordinal) ? ", jetstream: enabled" : string.Empty;
        return text + (text.Length == 0 || text.EndsWith('\n') ? string.Empty : "\n")
            + Opening
            + $"  BENCH: {{ users: [ {{ user: bench, password: bench }} ]{jetStream} }}\n"
            + idle
            + "}\nno_auth_user: bench\n";
    }
}
