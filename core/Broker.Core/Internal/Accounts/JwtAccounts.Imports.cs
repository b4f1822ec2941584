using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Events;
using Broker.Core.Internal.Jwt;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Stream imports of operator mode's accounts, from their JWTs (nats-server <c>updateAccountClaimsWithRefresh</c> →
/// <c>AddStreamImportWithClaim</c> / <c>AddMappedStreamImportWithClaim</c>, authorized by <c>checkStreamExportApproved</c>
/// → <c>checkAuth</c> → <c>checkActivation</c>): built into the same <see cref="StreamImport"/>s the configuration
/// builds, whenever the importer or its exporter takes a JWT, the exporter looked up (and registered) as a client's
/// account would be. A public export authorizes anyone; <c>token_req</c> an activation JWT in the import signed by the
/// exporter (or one of its signing keys) for the importer, not expired (a timer rebuilds the imports when it expires)
/// and not revoked by the export; <c>account_token_position</c> the importer's own key at that token. An import that
/// cannot be made is left out and logged, as nats-server leaves it incomplete. Service imports and exports are built
/// alongside (JwtAccounts.Services.cs).
/// </summary>
internal sealed partial class JwtAccounts
{
    private readonly Lock importsLock = new();
    private ILogger? importsLogger;

    /// <summary>Raised after an account's imports were rebuilt, so its service imports are subscribed and its clients rebuild their shadow subscriptions.</summary>
    public event Action<Account>? ImportsChanged;

    /// <summary>Sets where skipped imports are logged.</summary>
    public void LogImportsTo(ILogger logger) => importsLogger = logger;

    /// <summary>
    /// Rebuilds the stream imports of <paramref name="changed"/> and of every account importing from it, after it took
    /// a JWT (or lost it).
    /// </summary>
    public void RefreshImports(Account changed)
    {
        List<Account> affected;
        lock (importsLock)
        {
            affected = [.. registry.All.Where(a => a.Jwt is not null && (ReferenceEquals(a, changed)
                || (a.Jwt.Claims.Nats.Imports ?? []).Any(i => i.Account == changed.Name)))];
            foreach (var account in affected)
            {
                // Exports first: the imports below point at the exporter's ServiceExport objects.
                account.StageServices(account.ServiceImports, BuildServiceExports(account));
            }

            foreach (var importer in affected)
            {
                var activations = new HashSet<string>(StringComparer.Ordinal);
                importer.SetStreams(BuildStreamImports(importer, activations), Exports(importer));
                importer.StageServices(BuildServiceImports(importer, activations), importer.ServiceExports);

                DropActivationTimers(importer, activations);
            }
        }

        foreach (var importer in affected)
        {
            ImportsChanged?.Invoke(importer);
        }
    }

    private static List<(string Subject, string[]? Accounts)> Exports(Account account) =>
        [.. (account.Jwt!.Claims.Nats.Exports ?? []).Where(e => e.Type == "stream" && e.Subject is not null).Select(e => (e.Subject!, (string[]?)null))];

    // Under importsLock.
    private StreamImport[] BuildStreamImports(Account importer, HashSet<string> activations)
    {
        var imports = new List<StreamImport>();
        foreach (var claim in importer.Jwt!.Claims.Nats.Imports ?? [])
        {
            if (claim.Type != "stream")
            {
                continue;
            }

            if (claim.Account is not { } exporterKey || claim.Subject is not { } from || !Subjects.IsValid(Encoding.UTF8.GetBytes(from)))
            {
                Skipped(importer, claim, "import is not valid");
                continue;
            }

            if (!TryAuthorizedExporter(importer, exporterKey, from, claim, activations, "stream import not authorized", out var exporter))
            {
                continue;
            }

            string to;
            if (!string.IsNullOrEmpty(claim.LocalSubject))
            {
                to = claim.LocalSubject;
            }
            else if (!string.IsNullOrEmpty(claim.To))
            {
                if (Subjects.HasWildcard(Encoding.UTF8.GetBytes(claim.To)))
                {
                    Skipped(importer, claim, "stream import prefix can not contain wildcard tokens");
                    continue;
                }

                to = (claim.To.EndsWith('.') ? claim.To : claim.To + ".") + from;
            }
            else
            {
                to = from;
            }

            try
            {
                imports.Add(new StreamImport(exporter, from, to));
            }
            catch (InvalidOperationException ex)
            {
                Skipped(importer, claim, ex.Message);
            }
        }

        return [.. imports];
    }

    // nats-server checkStreamExportApproved / checkServiceExportApproved: the export of the claim's type that approves.
    // The exporter is looked up as at a client's connect; an account that is not (yet) available, or that does not
    // authorize the import, leaves the import out (logged with the reason).
    private bool TryAuthorizedExporter(Account importer, string exporterKey, string subject, ImportClaim claim, HashSet<string> activations, string refusal, [NotNullWhen(true)] out Account? exporter)
    {
        exporter = importer;
        if (exporterKey != importer.Name)
        {
            if (!TryLookup(exporterKey, out exporter, out var error))
            {
                Skipped(importer, claim, error);
                return false;
            }
        }

        if (exporter.Jwt is null || exporter.IsExpired || !Authorized(exporter, importer, subject, claim, activations))
        {
            Skipped(importer, claim, refusal);
            exporter = null;
            return false;
        }

        return true;
    }

    private bool Authorized(Account exporter, Account importer, string subject, ImportClaim claim, HashSet<string> activations) =>
        FindExport(exporter, claim.Type!, subject) is { } export && CheckAuth(export, exporter, importer, subject, claim, activations);

    // An export of exactly the subject, else the first whose subject contains it.
    private static ExportClaim? FindExport(Account exporter, string type, string subject)
    {
        var exports = (exporter.Jwt!.Claims.Nats.Exports ?? []).Where(e => e.Type == type && e.Subject is not null).ToList();
        var exact = exports.FirstOrDefault(e => e.Subject == subject);
        if (exact is not null)
        {
            return exact;
        }

        var bytes = Encoding.UTF8.GetBytes(subject);
        return exports.FirstOrDefault(e => Subjects.IsSubsetOf(bytes, Encoding.UTF8.GetBytes(e.Subject!)));
    }

    private bool CheckAuth(ExportClaim export, Account exporter, Account importer, string subject, ImportClaim claim, HashSet<string> activations)
    {
        if (!export.TokenRequired && export.AccountTokenPosition == 0)
        {
            return true;
        }

        if (export.AccountTokenPosition > 0)
        {
            var tokens = subject.Split('.');
            return export.AccountTokenPosition <= tokens.Length && tokens[export.AccountTokenPosition - 1] == importer.Name;
        }

        return CheckActivation(export, exporter, importer, subject, claim, activations);
    }

    // nats-server checkActivation with the import's own Validate: an activation JWT for this importer and subject.
    private bool CheckActivation(ExportClaim export, Account exporter, Account importer, string subject, ImportClaim claim, HashSet<string> activations)
    {
        if (string.IsNullOrEmpty(claim.Token) || !GenericJwt.TryDecode(claim.Token, out var activation, out _)
            || activation.Nats.ValueKind != JsonValueKind.Object)
        {
            return false;
        }

        var nats = activation.Nats;
        if (String(nats, "type") != "activation" || (activation.Subject != importer.Name && activation.Subject != "public"))
        {
            return false;
        }

        // Signed by the exporter, or by one of its signing keys naming it as issuer_account.
        var issuer = activation.Issuer!;
        if (issuer != exporter.Name && !(exporter.Jwt!.HasIssuer(issuer, out _) && String(nats, "issuer_account") == exporter.Name))
        {
            return false;
        }

        if (String(nats, "subject") is not { } activated || !Subjects.IsSubsetOf(Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(activated)))
        {
            return false;
        }

        var now = time.GetUtcNow().ToUnixTimeSeconds();
        if (activation.Expires != 0)
        {
            if (activation.Expires <= now)
            {
                return false;
            }

            // nats-server's activationExpired: the import goes when its activation expires (one timer per activation).
            activations.Add(claim.Token);
            StartActivationTimer(importer, claim.Token, TimeSpan.FromSeconds(activation.Expires - now));
        }

        return !ClaimsValidator.IsRevoked(export.Revocations, activation.Subject!, activation.IssuedAt);
    }

    private static string? String(JsonElement element, string name) =>
        element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    private void Skipped(Account importer, ImportClaim claim, string reason)
    {
        if (importsLogger is { } logger)
        {
            ClaimsLog.ImportSkipped(logger, claim.Type ?? string.Empty, claim.Subject ?? string.Empty, claim.Account ?? string.Empty, importer.Name, reason);
        }
    }
}
