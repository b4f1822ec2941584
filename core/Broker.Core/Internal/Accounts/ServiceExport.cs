using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One service export of an account (nats-server's <c>serviceExport</c>): who may import it, how many responses its
/// requests get and how long a route back to a requester waits for one.
/// </summary>
internal sealed class ServiceExport
{
    public ServiceExport(Account owner, string subject, string[]? approved, ServiceResponseType responseType, TimeSpan threshold, int accountTokenPosition = 0, ServiceLatency? latency = null)
    {
        Latency = latency;
        Owner = owner;
        Subject = subject;
        Approved = approved;
        ResponseType = responseType;
        Threshold = threshold;
        AccountTokenPosition = accountTokenPosition;
    }

    /// <summary>The exporting account.</summary>
    public Account Owner { get; }

    public string Subject { get; }

    /// <summary>The accounts allowed to import it; null when public.</summary>
    public string[]? Approved { get; }

    public ServiceResponseType ResponseType { get; }

    /// <summary>How long a route back waits for a response (nats-server's <c>respThresh</c>).</summary>
    public TimeSpan Threshold { get; }

    /// <summary>
    /// For the system account's exports: the 1-based token of the subject that must be the importing account's name
    /// (nats-server's <c>account_token_position</c>); 0 when none.
    /// </summary>
    public int AccountTokenPosition { get; }

    /// <summary>Latency tracking of its requests; null when not tracked (the only check a request pays then).</summary>
    public ServiceLatency? Latency { get; }

    /// <summary>The response type as /accountz shows it (nats-server's <c>ServiceRespType.String</c>).</summary>
    public string ResponseTypeText => ResponseType switch
    {
        ServiceResponseType.Streamed => "Streamed",
        ServiceResponseType.Chunked => "Chunked",
        _ => "Singleton",
    };
}
