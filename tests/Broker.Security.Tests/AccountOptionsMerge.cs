using Broker.Core.Auth;

namespace Broker.Security.Tests;

/// <summary>Builds account options for the import tests from one-item pieces (an export here, an import there).</summary>
internal static class AccountOptionsMerge
{
    /// <summary>Adds <paramref name="second"/>'s exports and imports (streams and services) to <paramref name="first"/>.</summary>
    public static AccountOptions With(AccountOptions first, AccountOptions second)
    {
        foreach (var export in second.Exports.Streams)
        {
            first.Exports.Streams.Add(export);
        }

        foreach (var export in second.Exports.Services)
        {
            first.Exports.Services.Add(export);
        }

        foreach (var import in second.Imports.Streams)
        {
            first.Imports.Streams.Add(import);
        }

        foreach (var import in second.Imports.Services)
        {
            first.Imports.Services.Add(import);
        }

        return first;
    }

    /// <summary>One entry per account name, in first-seen order, the later pieces added to the first.</summary>
    public static List<AccountOptions> Merge(AccountOptions[] accounts)
    {
        var result = new List<AccountOptions>();
        foreach (var account in accounts)
        {
            if (result.Find(a => a.Name == account.Name) is { } existing)
            {
                With(existing, account);
            }
            else
            {
                result.Add(account);
            }
        }

        return result;
    }
}
