using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// A service import, or a route back to a requester (nats-server's <c>serviceImport</c>, whose <c>response</c> flag
/// tells the two apart). An import is a subscription of its account's <see cref="AccountImportClient"/> on
/// <see cref="From"/>: a publish matching it is forwarded to <see cref="Destination"/> on <see cref="To"/> (mapped when
/// both hold wildcards). A route back lives in the exporter's <see cref="ResponseRoutes"/> under the reply the responder
/// saw (<see cref="From"/>, <c>_R_.xxxxxx.yyyyyy</c>) and forwards a response to the requester's account on its reply.
/// </summary>
internal sealed class ServiceImport
{
    private readonly ImportTransform? transform;
    private string? to;

    /// <param name="destination">The exporting account (for a route back: the requester's account).</param>
    /// <param name="from">The subject in the account the import lives in (for a route back: the reply given to the responder).</param>
    /// <param name="to">The subject in <paramref name="destination"/> (for a route back: the requester's reply).</param>
    /// <param name="export">The export the import goes through (null when the exporter had none covering it).</param>
    /// <param name="share">Whether the requester's details travel in the <c>Nats-Request-Info</c> header.</param>
    /// <exception cref="InvalidOperationException">The subjects' wildcards cannot be mapped onto each other.</exception>
    public ServiceImport(Account destination, string from, string to, ServiceExport? export, bool share)
    {
        Destination = destination;
        From = from;
        this.to = to;
        Export = export;
        Share = share;
        FromBytes = Encoding.UTF8.GetBytes(from);
        ToBytes = Encoding.UTF8.GetBytes(to);
        ResponseType = export?.ResponseType ?? ServiceResponseType.Singleton;
        if (Subjects.HasWildcard(ToBytes))
        {
            if (to == from)
            {
                UsesPublished = true;
            }
            else
            {
                transform = ImportTransform.Create(from, to);
            }
        }

        Touch();
    }

    // A route back: the reply the responder sees and the requester's reply, kept as bytes (the string only for /accountz).
    private ServiceImport(Account destination, string reply, byte[] requesterReply, ServiceExport? export, bool share, LatencyTracking? tracking)
    {
        Tracking = tracking;
        Destination = destination;
        From = reply;
        FromBytes = Encoding.ASCII.GetBytes(reply);
        ToBytes = requesterReply;
        Export = export;
        Share = share;
        IsResponse = true;
        ResponseType = export?.ResponseType ?? ServiceResponseType.Singleton;
        Touch();
    }

    /// <summary>A route back to a requester's <paramref name="requesterReply"/> in <paramref name="requester"/>.</summary>
    public static ServiceImport Route(Account requester, string reply, ReadOnlySpan<byte> requesterReply, ServiceExport? export, bool share, LatencyTracking? tracking = null) =>
        new(requester, reply, requesterReply.ToArray(), export, share, tracking);

    /// <summary>Where a forwarded message goes: the exporter, or for a route back the requester's account.</summary>
    public Account Destination { get; }

    public string From { get; }

    public byte[] FromBytes { get; }

    public string To => to ??= Encoding.UTF8.GetString(ToBytes);

    public byte[] ToBytes { get; }

    public ServiceExport? Export { get; }

    public bool Share { get; }

    public bool IsResponse { get; }

    /// <summary>A route back of a sampled request: its latency measurement; null otherwise.</summary>
    public LatencyTracking? Tracking { get; }

    public ServiceResponseType ResponseType { get; }

    /// <summary>The published subject is forwarded as it is (a wildcard import whose subjects are the same).</summary>
    public bool UsesPublished { get; }

    /// <summary>When the route was made or last carried a response (<see cref="Environment.TickCount64"/>).</summary>
    public long LastUsed { get; private set; }

    public void Touch() => LastUsed = Environment.TickCount64;

    /// <summary>
    /// The subject a request published on <paramref name="published"/> goes to in the exporter: the published subject,
    /// the literal <see cref="To"/>, or the transform written into <paramref name="buffer"/> (a wildcard import with
    /// another subject; the caller's own buffer, grown when too small, so forwarding allocates nothing once it fits).
    /// </summary>
    public ReadOnlySpan<byte> Target(ReadOnlySpan<byte> published, ref byte[] buffer)
    {
        if (transform is not null)
        {
            var length = transform.Apply(published, ref buffer);
            return buffer.AsSpan(0, length);
        }

        return UsesPublished ? published : ToBytes;
    }
}
