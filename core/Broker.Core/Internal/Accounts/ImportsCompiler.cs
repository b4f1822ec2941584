using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Checks the accounts' exports and imports as nats-server does when it loads a configuration (opts.go
/// <c>parseAccounts</c>: every export, then every import in order, each checked against those accepted before it) and
/// builds the imports. The texts are nats-server's; cycles are found as its <c>checkStreamImportsForCycles</c> finds
/// them (colliding subjects, narrowing to the import's subject, a search depth of 1024).
/// </summary>
internal static partial class ImportsCompiler
{
    private const int MaxCycleSearchDepth = 1024;

    private static ServiceLatency? Latency(ServiceExportOptions export) =>
        export.Latency is { } latency ? new ServiceLatency(latency.Sampling, latency.Subject) : null;

    /// <summary>Checks the options; throws at the first error.</summary>
    /// <exception cref="InvalidOperationException">An export or import nats-server refuses; the message is its text.</exception>
    public static void Validate(IEnumerable<AccountOptions> accounts) =>
        Compile(accounts, name => new Account(name, AccountLimits.None));

    /// <summary>Builds the imports and service exports of each account, with accounts from <paramref name="resolve"/>.</summary>
    /// <exception cref="InvalidOperationException">An export or import nats-server refuses; the message is its text.</exception>
    public static Dictionary<string, CompiledImports> Compile(IEnumerable<AccountOptions> accounts, Func<string, Account> resolve)
    {
        var states = new Dictionary<string, State>(StringComparer.Ordinal);
        var list = accounts.ToList();
        foreach (var account in list)
        {
            states.TryAdd(account.Name, new State(account));
        }

        foreach (var account in list)
        {
            foreach (var export in account.Exports.Streams)
            {
                AddExport(states, states[account.Name], export);
            }
        }

        var services = new Dictionary<string, ServiceExport[]>(StringComparer.Ordinal);
        foreach (var account in list)
        {
            foreach (var export in account.Exports.Services)
            {
                AddServiceExport(states, states[account.Name], export);
            }
        }

        foreach (var account in list)
        {
            var state = states[account.Name];
            var owner = resolve(account.Name);
            services[account.Name] = [.. state.ServiceExports.Select(e => new ServiceExport(owner, e.Subject, e.Allowed?.ToArray(), e.Options.ResponseType, e.Options.ResponseThreshold, latency: Latency(e.Options)))];
        }

        var streams = new Dictionary<string, StreamImport[]>(StringComparer.Ordinal);
        foreach (var account in list)
        {
            var importer = states[account.Name];
            var imports = new List<StreamImport>();
            foreach (var import in account.Imports.Streams)
            {
                imports.Add(AddImport(states, importer, import, resolve));
            }

            streams[account.Name] = [.. imports];
        }

        var result = new Dictionary<string, CompiledImports>(StringComparer.Ordinal);
        foreach (var account in list)
        {
            var importer = states[account.Name];
            var imports = new List<ServiceImport>();
            foreach (var import in account.Imports.Services)
            {
                imports.Add(AddServiceImport(states, importer, import, resolve, name => services[name]));
            }

            result[account.Name] = new CompiledImports(streams[account.Name], [.. imports], services[account.Name]);
        }

        return result;
    }

    private static void AddExport(Dictionary<string, State> states, State exporter, StreamExportOptions export)
    {
        HashSet<string>? allowed = null;
        if (export.Accounts is { } names)
        {
            allowed = new HashSet<string>(StringComparer.Ordinal);
            foreach (var name in names)
            {
                if (!states.ContainsKey(name))
                {
                    throw new InvalidOperationException($"{Quote(name)} account not defined for stream export");
                }

                allowed.Add(name);
            }
        }

        if (!Subjects.IsValid(Encoding.UTF8.GetBytes(export.Subject)))
        {
            throw new InvalidOperationException($"Error adding stream export {Quote(export.Subject)}: subject is not valid");
        }

        // A repeated subject replaces the earlier entry, as nats-server's map of exports does.
        exporter.Exports.RemoveAll(e => e.Subject == export.Subject);
        exporter.Exports.Add((export.Subject, allowed));
    }

    private static StreamImport AddImport(Dictionary<string, State> states, State importer, StreamImportOptions import, Func<string, Account> resolve)
    {
        if (!string.IsNullOrEmpty(import.Prefix) && !string.IsNullOrEmpty(import.To))
        {
            throw new InvalidOperationException("Stream import can not have a 'prefix' and a 'to' property");
        }

        if (!states.TryGetValue(import.Account, out var exporter))
        {
            throw new InvalidOperationException($"{Quote(import.Account)} account not defined for stream import");
        }

        var subject = import.Subject;
        if (!Authorized(exporter, importer.Name, subject))
        {
            throw Error(subject, "stream import not authorized");
        }

        var to = import.To;
        if (!string.IsNullOrEmpty(import.Prefix))
        {
            var prefix = import.Prefix;
            if (Subjects.HasWildcard(Encoding.UTF8.GetBytes(prefix)))
            {
                throw Error(subject, "stream import prefix can not contain wildcard tokens");
            }

            to = (prefix.EndsWith('.') ? prefix : prefix + ".") + subject;
        }

        if (string.IsNullOrEmpty(to))
        {
            to = subject;
        }

        if (CheckCycles(states, exporter, to, [importer.Name]) is { } cycle)
        {
            throw Error(subject, cycle);
        }

        StreamImport built;
        try
        {
            built = new StreamImport(resolve(exporter.Name), subject, to);
        }
        catch (InvalidOperationException ex)
        {
            throw Error(subject, $"failed to create mapping transform for stream import subject {Quote(subject)} to {Quote(to)}: {ex.Message}");
        }

        if (importer.Imports.Exists(i => i.Exporter == exporter.Name && i.From == subject))
        {
            throw Error(subject, "stream import already exists");
        }

        importer.Imports.Add((exporter.Name, subject, to));
        return built;
    }

    // nats-server's checkStreamExportApproved: an exact export first, then the first export the subject is within.
    private static bool Authorized(State exporter, string importer, string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        if (exporter.Exports.Count == 0 || !Subjects.IsValid(bytes))
        {
            return false;
        }

        foreach (var (exported, allowed) in exporter.Exports)
        {
            if (exported == subject)
            {
                return allowed is null || allowed.Contains(importer);
            }
        }

        foreach (var (exported, allowed) in exporter.Exports)
        {
            if (Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(exported)))
            {
                return allowed is null || allowed.Contains(importer);
            }
        }

        return false;
    }

    // checkStreamImportsForCycles: follows the imports of the exporter whose subjects collide with ours.
    private static string? CheckCycles(Dictionary<string, State> states, State account, string to, HashSet<string> visited)
    {
        if (visited.Count >= MaxCycleSearchDepth)
        {
            return "search cycle depth exhausted";
        }

        var toBytes = Encoding.UTF8.GetBytes(to);
        if (!account.Exports.Exists(e => Subjects.IsSubsetOf(toBytes, Encoding.UTF8.GetBytes(e.Subject))))
        {
            return null;
        }

        foreach (var (exporter, _, importTo) in account.Imports)
        {
            var importToBytes = Encoding.UTF8.GetBytes(importTo);
            if (!Subjects.Collide(toBytes, importToBytes))
            {
                continue;
            }

            if (visited.Contains(exporter))
            {
                return "import forms a cycle";
            }

            visited.Add(account.Name);
            // As nats-server, the narrower subject stays for the imports after this one too.
            if (Subjects.IsSubsetOf(importToBytes, toBytes))
            {
                to = importTo;
                toBytes = importToBytes;
            }

            if (CheckCycles(states, states[exporter], to, visited) is { } error)
            {
                return error;
            }
        }

        return null;
    }

    private static InvalidOperationException Error(string subject, string cause) =>
        new($"Error adding stream import {Quote(subject)}: {cause}");

    internal static string Quote(string text) => Clients.GoQuote.Quote(Encoding.UTF8.GetBytes(text));

    private sealed class State(AccountOptions options)
    {
        public string Name { get; } = options.Name;

        public List<(string Subject, HashSet<string>? Allowed)> Exports { get; } = [];

        public List<(string Exporter, string From, string To)> Imports { get; } = [];

        public List<(string Subject, HashSet<string>? Allowed, ServiceExportOptions Options)> ServiceExports { get; } = [];

        /// <summary>Service imports accepted so far: the exporter, the subject here and the subject in the exporter.</summary>
        public List<(string Exporter, string From, string To)> ServiceImports { get; } = [];
    }
}
