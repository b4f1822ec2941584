using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Service exports and imports of operator mode's accounts, from their JWTs (nats-server
/// <c>updateAccountClaimsWithRefresh</c> → <c>addServiceExportWithResponseAndAccountPos</c> and
/// <c>AddServiceImportWithClaim</c>, authorized by <c>checkServiceExportApproved</c>): built into the same
/// <see cref="ServiceExport"/>s and <see cref="ServiceImport"/>s the configuration builds, with the system imports every
/// account gets (events.go <c>registerSystemImports</c>), and subscribed by the broker when
/// <see cref="ImportsChanged"/> is raised. A service import's <c>local_subject</c> (or, without it, its subject) is
/// what the importer's clients publish to; its subject (or the deprecated <c>to</c>) the exporter's subject.
/// </summary>
internal sealed partial class JwtAccounts
{
    // The system account's exports before it took a JWT (SystemImports.Register), set once by the constructor.
    private readonly ServiceExport[] systemExports;

    // Under importsLock: one expiry timer per activation token in use, by importer.
    private readonly Dictionary<(string Importer, string Token), ITimer> activationTimers = [];

    // Under importsLock. The system account's exports start from the system exports it got when the registry was built
    // (nats-server's addSystemAccountExports before the JWT's exports): the same instances, which every account's
    // system imports point at; an export of the JWT with the same subject replaces one.
    private ServiceExport[] BuildServiceExports(Account account)
    {
        var exports = account.IsSystem ? new List<ServiceExport>(systemExports) : [];
        foreach (var claim in account.Jwt?.Claims.Nats.Exports ?? [])
        {
            if (claim.Type != "service" || claim.Subject is null || !Subjects.IsValid(Encoding.UTF8.GetBytes(claim.Subject)))
            {
                continue;
            }

            var type = claim.ResponseType switch
            {
                "Stream" => ServiceResponseType.Streamed,
                "Chunked" => ServiceResponseType.Chunked,
                _ => ServiceResponseType.Singleton,
            };

            // nats-io/jwt's response_threshold is a Go duration: nanoseconds.
            var threshold = claim.ResponseThreshold > 0 ? TimeSpan.FromTicks(claim.ResponseThreshold / 100) : ServiceExportOptions.DefaultResponseThreshold;
            exports.RemoveAll(e => e.Subject == claim.Subject);
            exports.Add(new ServiceExport(account, claim.Subject, null, type, threshold, (int)claim.AccountTokenPosition, Latency(claim, type, exports)));
        }

        return [.. exports];
    }

    // An export's service_latency (nats-server TrackServiceExportWithSampling, whose refusal leaves the export untracked):
    // sampling "headers" or 1-100, a literal results subject outside the account's services, a singleton export.
    private static ServiceLatency? Latency(ExportClaim claim, ServiceResponseType type, List<ServiceExport> exports)
    {
        if (claim.Latency is not { Results: { } results } latency)
        {
            return null;
        }

        // nats-io/jwt's SamplingRate: absent or 0 is Headers.
        int sampling;
        if (latency.Sampling is not { } value || value.ValueKind is System.Text.Json.JsonValueKind.Null or System.Text.Json.JsonValueKind.Undefined
            || (value.ValueKind == System.Text.Json.JsonValueKind.String && string.Equals(value.GetString(), "headers", StringComparison.OrdinalIgnoreCase)))
        {
            sampling = 0;
        }
        else if (value.ValueKind == System.Text.Json.JsonValueKind.Number && value.TryGetInt32(out var rate) && rate is >= 0 and <= 100)
        {
            sampling = rate;
        }
        else
        {
            return null;
        }

        var check = ServiceLatency.Check(sampling, results, type, subject =>
        {
            var bytes = Encoding.UTF8.GetBytes(subject);
            return subject == claim.Subject || Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(claim.Subject!))
                || exports.Exists(e => e.Subject == subject || Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(e.Subject)));
        });
        return check is null ? new ServiceLatency(sampling, results) : null;
    }

    // Under importsLock.
    private ServiceImport[] BuildServiceImports(Account importer, HashSet<string> activations)
    {
        var imports = new List<ServiceImport>();
        foreach (var claim in importer.Jwt?.Claims.Nats.Imports ?? [])
        {
            if (claim.Type != "service")
            {
                continue;
            }

            if (claim.Account is not { } exporterKey || claim.Subject is not { } subject)
            {
                Skipped(importer, claim, "import is not valid");
                continue;
            }

            var (from, to) = string.IsNullOrEmpty(claim.LocalSubject)
                ? (subject, string.IsNullOrEmpty(claim.To) ? subject : claim.To)
                : (claim.LocalSubject, subject);
            if (!Subjects.IsValid(Encoding.UTF8.GetBytes(from)) || !Subjects.IsValid(Encoding.UTF8.GetBytes(to)))
            {
                Skipped(importer, claim, "invalid subject");
                continue;
            }

            if (!TryAuthorizedExporter(importer, exporterKey, to, claim, activations, "service import not authorized", out var exporter))
            {
                continue;
            }

            if (FormsCycle(exporter, from, [importer.Name]) is { } cycle)
            {
                Skipped(importer, claim, cycle);
                continue;
            }

            if (imports.Exists(i => i.From == from))
            {
                Skipped(importer, claim, "duplicate service import subject");
                continue;
            }

            var toBytes = Encoding.UTF8.GetBytes(to);
            var export = Array.Find(exporter.ServiceExports, e => e.Subject == to)
                ?? Array.Find(exporter.ServiceExports, e => Subjects.IsSubsetOf(toBytes, Encoding.UTF8.GetBytes(e.Subject)));
            try
            {
                imports.Add(new ServiceImport(exporter, from, to, export, claim.Share));
            }
            catch (InvalidOperationException ex)
            {
                Skipped(importer, claim, ex.Message);
            }
        }

        if (registry.System is { } system && !ReferenceEquals(system, importer))
        {
            SystemImports.AddImports(system, importer, imports);
        }

        return [.. imports];
    }

    // nats-server checkServiceImportsForCycles: follows the account's service imports whose exporter-side subjects collide.
    private static string? FormsCycle(Account account, string from, HashSet<string> visited)
    {
        if (visited.Count >= 1024)
        {
            return "search cycle depth exhausted";
        }

        foreach (var import in account.ServiceImports)
        {
            var fromBytes = Encoding.UTF8.GetBytes(from);
            if (!Subjects.Collide(fromBytes, import.ToBytes))
            {
                continue;
            }

            if (visited.Contains(import.Destination.Name))
            {
                return "import forms a cycle";
            }

            visited.Add(account.Name);
            if (Subjects.IsSubsetOf(import.FromBytes, fromBytes))
            {
                from = import.From;
            }

            if (FormsCycle(import.Destination, from, visited) is { } error)
            {
                return error;
            }
        }

        return null;
    }

    // Under importsLock.
    private void StartActivationTimer(Account importer, string token, TimeSpan due)
    {
        if (activationTimers.ContainsKey((importer.Name, token)))
        {
            return;
        }

        activationTimers[(importer.Name, token)] = time.CreateTimer(
            static s => { var (self, account) = ((JwtAccounts, Account))s!; self.RefreshImports(account); },
            (this, importer),
            due,
            Timeout.InfiniteTimeSpan);
    }

    // Under importsLock: the timers of activations the importer no longer uses.
    private void DropActivationTimers(Account importer, HashSet<string> inUse)
    {
        foreach (var key in activationTimers.Keys.Where(k => k.Importer == importer.Name && !inUse.Contains(k.Token)).ToList())
        {
            activationTimers.Remove(key, out var timer);
            timer!.Dispose();
        }
    }

    private void DisposeActivationTimers()
    {
        lock (importsLock)
        {
            foreach (var timer in activationTimers.Values)
            {
                timer.Dispose();
            }

            activationTimers.Clear();
        }
    }
}
