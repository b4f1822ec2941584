using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// What the system account exports and every other account imports from it (events.go
/// <c>addSystemAccountExports</c>, <c>registerSystemImports</c>): <c>$SYS.REQ.ACCOUNT.*.CONNZ</c> and <c>.STATZ</c>
/// (streamed, the account's name in token 4) and <c>$SYS.DEBUG.SUBSCRIBERS</c>; each account imports
/// <c>$SYS.REQ.ACCOUNT.PING.CONNZ</c> and <c>$SYS.REQ.SERVER.PING.CONNZ</c> as its own
/// <c>$SYS.REQ.ACCOUNT.&lt;name&gt;.CONNZ</c>, and <c>$SYS.REQ.ACCOUNT.PING.STATZ</c> as its <c>.STATZ</c>, so a user of
/// an account asking the server for its connections gets its account's only.
/// </summary>
internal static class SystemImports
{
    private const string AccountConnz = "$SYS.REQ.ACCOUNT.*.CONNZ";
    private const string AccountStatz = "$SYS.REQ.ACCOUNT.*.STATZ";
    private const string DebugSubscribers = "$SYS.DEBUG.SUBSCRIBERS";

    /// <summary>Adds the system exports not configured already, and the system imports of every other account.</summary>
    public static void Register(Account system, IEnumerable<Account> accounts)
    {
        var exports = new List<ServiceExport>(system.ServiceExports);
        var connz = Export(system, exports, AccountConnz, ServiceResponseType.Streamed, 4);
        var statz = Export(system, exports, AccountStatz, ServiceResponseType.Streamed, 4);
        Export(system, exports, DebugSubscribers, ServiceResponseType.Singleton, 0);
        system.StageServices(system.ServiceImports, [.. exports]);

        foreach (var account in accounts)
        {
            if (ReferenceEquals(account, system))
            {
                continue;
            }

            var imports = new List<ServiceImport>(account.ServiceImports);
            AddImports(imports, system, account, connz, statz);
            account.StageServices([.. imports], account.ServiceExports);
        }
    }

    /// <summary>
    /// Adds the system imports of <paramref name="account"/> to <paramref name="imports"/> (an operator-mode account
    /// registered after the registry was built), through the exports <see cref="Register"/> gave the system account.
    /// </summary>
    public static void AddImports(Account system, Account account, List<ServiceImport> imports)
    {
        var connz = Find(system, AccountConnz);
        var statz = Find(system, AccountStatz);
        if (connz is not null && statz is not null)
        {
            AddImports(imports, system, account, connz, statz);
        }
    }

    private static ServiceExport? Find(Account system, string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        return Array.Find(system.ServiceExports, e => Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(e.Subject)));
    }

    private static void AddImports(List<ServiceImport> imports, Account system, Account account, ServiceExport connz, ServiceExport statz)
    {
        var own = "$SYS.REQ.ACCOUNT." + account.Name + ".";
        Import(imports, system, "$SYS.REQ.ACCOUNT.PING.CONNZ", own + "CONNZ", connz);
        Import(imports, system, "$SYS.REQ.SERVER.PING.CONNZ", own + "CONNZ", connz);
        Import(imports, system, "$SYS.REQ.ACCOUNT.PING.STATZ", own + "STATZ", statz);
    }

    // A configured export the subject falls within takes precedence (nats-server's hasServiceExportMatching).
    private static ServiceExport Export(Account system, List<ServiceExport> exports, string subject, ServiceResponseType type, int position)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        if (exports.Find(e => Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(e.Subject))) is { } configured)
        {
            return configured;
        }

        var export = new ServiceExport(system, subject, null, type, ServiceExportOptions.DefaultResponseThreshold, position);
        exports.Add(export);
        return export;
    }

    // An account that imports the subject already keeps its own (nats-server's serviceImportExists).
    private static void Import(List<ServiceImport> imports, Account system, string from, string to, ServiceExport export)
    {
        if (!imports.Exists(i => i.From == from))
        {
            imports.Add(new ServiceImport(system, from, to, export, share: false));
        }
    }
}
