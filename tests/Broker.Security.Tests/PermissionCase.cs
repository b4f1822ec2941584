namespace Broker.Security.Tests;

/// <summary>
/// One row of a permission table: who acts, the steps (see <see cref="WireScript"/>), and what the user and the
/// observer receive. <see cref="ReferenceUser"/>/<see cref="ReferenceObserver"/> are set only where nats-server 2.9.10
/// differs because we are stricter on purpose; <see cref="Note"/> says why (docs/reliability.md lists it).
/// </summary>
internal sealed record PermissionCase(
    string Name,
    SecurityUser User,
    string[] Steps,
    string ExpectedUser,
    string ExpectedObserver = "",
    string? ReferenceUser = null,
    string? ReferenceObserver = null,
    string? Note = null)
{
    public string UserFor(ServerKind kind) => kind == ServerKind.Reference ? ReferenceUser ?? ExpectedUser : ExpectedUser;

    public string ObserverFor(ServerKind kind) => kind == ServerKind.Reference ? ReferenceObserver ?? ExpectedObserver : ExpectedObserver;

    public override string ToString() => Name;

    /// <summary>The theory rows of a table: every case by name, on our broker and on nats-server.</summary>
    public static TheoryData<string, ServerKind> OnBothServers(IEnumerable<PermissionCase> cases)
    {
        var rows = new TheoryData<string, ServerKind>();
        foreach (var row in cases)
        {
            rows.Add(row.Name, ServerKind.Ours);
            rows.Add(row.Name, ServerKind.Reference);
        }

        return rows;
    }
}

/// <summary>nats-server's permission error lines.</summary>
internal static class Violation
{
    public static string Pub(string subject) => $"-ERR 'Permissions Violation for Publish to \"{subject}\"'";

    public static string Sub(string subject) => $"-ERR 'Permissions Violation for Subscription to \"{subject}\"'";

    public static string Sub(string subject, string queue) => $"-ERR 'Permissions Violation for Subscription to \"{subject}\" using queue \"{queue}\"'";
}
