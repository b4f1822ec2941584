using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Service exports and imports as nats-server's <c>parseAccounts</c> adds them (after every stream export and import):
/// <c>addServiceExportWithResponseAndAccountPos</c>, then <c>AddServiceImport</c> with its checks in its order (the
/// subjects, the export's approval, cycles as <c>checkServiceImportsForCycles</c> finds them, duplicates, the mapping).
/// </summary>
internal static partial class ImportsCompiler
{
    private static void AddServiceExport(Dictionary<string, State> states, State exporter, ServiceExportOptions export)
    {
        HashSet<string>? allowed = null;
        if (export.Accounts is { } names)
        {
            allowed = new HashSet<string>(StringComparer.Ordinal);
            foreach (var name in names)
            {
                if (!states.ContainsKey(name))
                {
                    throw new InvalidOperationException($"{Quote(name)} account not defined for service export");
                }

                allowed.Add(name);
            }
        }

        if (export.ResponseThreshold <= TimeSpan.Zero)
        {
            throw new InvalidOperationException($"Error adding service export response threshold for {Quote(export.Subject)}: the threshold must be positive");
        }

        // A repeated subject replaces the earlier entry, as nats-server's map of exports does.
        exporter.ServiceExports.RemoveAll(e => e.Subject == export.Subject);
        exporter.ServiceExports.Add((export.Subject, allowed, export));
        if (export.Latency is { } latency
            && ServiceLatency.Check(latency.Sampling, latency.Subject, export.ResponseType, subject => IsServiceExport(exporter, subject)) is { } cause)
        {
            throw new InvalidOperationException($"Error adding service latency sampling for {Quote(export.Subject)} on subject {Quote(latency.Subject)}: {cause}");
        }
    }

    // nats-server's IsExportService: a subject within one of the account's service exports.
    private static bool IsServiceExport(State exporter, string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        return exporter.ServiceExports.Exists(e => e.Subject == subject || Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(e.Subject)));
    }

    private static ServiceImport AddServiceImport(Dictionary<string, State> states, State importer, ServiceImportOptions import, Func<string, Account> resolve, Func<string, ServiceExport[]> exports)
    {
        if (!states.TryGetValue(import.Account, out var exporter))
        {
            throw new InvalidOperationException($"{Quote(import.Account)} account not defined for service import");
        }

        // nats-server's names: `from` is the subject in the importer, `to` the one in the exporter.
        var to = import.Subject;
        var from = string.IsNullOrEmpty(import.To) ? to : import.To;
        if (!Subjects.IsValid(Encoding.UTF8.GetBytes(from)) || !Subjects.IsValid(Encoding.UTF8.GetBytes(to)))
        {
            throw ServiceError(to, "sublist: invalid subject");
        }

        if (!ServiceAuthorized(exporter, importer.Name, to))
        {
            throw ServiceError(to, "service import not authorized");
        }

        if (CheckServiceCycles(states, exporter, from, [importer.Name]) is { } cycle)
        {
            throw ServiceError(to, cycle);
        }

        if (importer.ServiceImports.Find(i => i.From == from) is { Exporter: not null } duplicate)
        {
            throw ServiceError(to, $"duplicate service import subject {Quote(from)}, previously used in import for account {Quote(duplicate.Exporter)}, subject {Quote(duplicate.To)}");
        }

        ServiceImport built;
        try
        {
            built = new ServiceImport(resolve(exporter.Name), from, to, FindExport(exports(exporter.Name), to), import.Share);
        }
        catch (InvalidOperationException ex)
        {
            throw ServiceError(to, $"failed to create mapping transform for service import subject {Quote(from)} to {Quote(to)}: {ex.Message}");
        }

        importer.ServiceImports.Add((exporter.Name, from, to));
        return built;
    }

    // nats-server's getServiceExport: the export of that exact subject, else the first one the subject is within.
    private static ServiceExport? FindExport(ServiceExport[] exports, string subject)
    {
        foreach (var export in exports)
        {
            if (export.Subject == subject)
            {
                return export;
            }
        }

        var bytes = Encoding.UTF8.GetBytes(subject);
        foreach (var export in exports)
        {
            if (Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(export.Subject)))
            {
                return export;
            }
        }

        return null;
    }

    // checkServiceExportApproved: an exact export first, then the first export the subject is within.
    private static bool ServiceAuthorized(State exporter, string importer, string subject)
    {
        if (exporter.ServiceExports.Count == 0)
        {
            return false;
        }

        foreach (var (exported, allowed, _) in exporter.ServiceExports)
        {
            if (exported == subject)
            {
                return allowed is null || allowed.Contains(importer);
            }
        }

        var bytes = Encoding.UTF8.GetBytes(subject);
        foreach (var (exported, allowed, _) in exporter.ServiceExports)
        {
            if (Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(exported)))
            {
                return allowed is null || allowed.Contains(importer);
            }
        }

        return false;
    }

    // checkServiceImportsForCycles: follows the exporter's own service imports whose exporter-side subjects collide.
    private static string? CheckServiceCycles(Dictionary<string, State> states, State account, string from, HashSet<string> visited)
    {
        if (visited.Count >= MaxCycleSearchDepth)
        {
            return "search cycle depth exhausted";
        }

        foreach (var (exporter, importFrom, importTo) in account.ServiceImports)
        {
            var fromBytes = Encoding.UTF8.GetBytes(from);
            if (!Subjects.Collide(fromBytes, Encoding.UTF8.GetBytes(importTo)))
            {
                continue;
            }

            if (visited.Contains(exporter))
            {
                return "import forms a cycle";
            }

            visited.Add(account.Name);
            if (Subjects.IsSubsetOf(Encoding.UTF8.GetBytes(importFrom), fromBytes))
            {
                from = importFrom;
            }

            if (CheckServiceCycles(states, states[exporter], from, visited) is { } error)
            {
                return error;
            }
        }

        return null;
    }

    private static InvalidOperationException ServiceError(string subject, string cause) =>
        new($"Error adding service import {Quote(subject)}: {cause}");
}

/// <summary>An account's imports and service exports as compiled from its options.</summary>
internal sealed record CompiledImports(StreamImport[] Streams, ServiceImport[] Services, ServiceExport[] ServiceExports);
