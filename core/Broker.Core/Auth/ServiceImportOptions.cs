namespace Broker.Core.Auth;

/// <summary>
/// One service import of an account (nats-server's <c>imports: [{ service: { account: A, subject: "svc.>" }, to:
/// "local.>" }]</c>): requests this account's clients publish on <see cref="To"/> (or <see cref="Subject"/>) are
/// forwarded to <see cref="Account"/> on <see cref="Subject"/>, and the responses come back to the requester's reply.
/// </summary>
public sealed class ServiceImportOptions
{
    /// <summary>The exporting account. Required; it must export a service covering <see cref="Subject"/> to this account.</summary>
    public string Account { get; set; } = "";

    /// <summary>The service's subject in the exporting account; may hold wildcards. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>
    /// The subject this account's clients publish requests on; its wildcards map to <see cref="Subject"/>'s in order,
    /// or <c>$N</c> / <c>{{wildcard(N)}}</c> in <see cref="Subject"/> name them. Default: <see cref="Subject"/> itself.
    /// </summary>
    public string? To { get; set; }

    /// <summary>
    /// Whether the requester's details (connection id, user, name, host, start, client library) travel to the
    /// exporter in the <c>Nats-Request-Info</c> header, beside the account and round-trip time it always gets. Default false.
    /// </summary>
    public bool Share { get; set; }

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public ServiceImportOptions Clone() => (ServiceImportOptions)MemberwiseClone();
}
