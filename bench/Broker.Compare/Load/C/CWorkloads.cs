using System.Globalization;

namespace Broker.Compare.Load.C;

/// <summary>
/// <see cref="PubSubWorkload"/> driven by the C generator (libnats, <see cref="CLoadGenerator"/>): a connection and thread
/// per publisher calling <c>natsConnection_Publish</c>, a connection per subscriber with an asynchronous callback and no
/// pending limit, each subscriber receiving every message. Across a leaf link the subscribers connect to the other
/// server and natsbench probes the link as <see cref="LinkInterest"/> does before publishing. Units as the lean generator's.
/// </summary>
internal sealed class CPubSubWorkload(int payloadSize, int publishers, int subscribers) : IWorkload
{
    public long CalibrationCount => payloadSize >= 4096 ? 5_000 : 50_000;

    public long SmokeCount => payloadSize >= 4096 ? 100 : 2_000;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        var result = CLoadGenerator.Run(
            ["pubsub", CWorkloadArguments.Url(server), subject, CWorkloadArguments.Number(payloadSize), CWorkloadArguments.Number(count), CWorkloadArguments.Number(publishers), CWorkloadArguments.Number(subscribers), CWorkloadArguments.Url(server.Subscribers)],
            cancellationToken);
        return new Measurement(result.Units, result.Units * payloadSize, result.Elapsed);
    }
}

/// <summary>
/// <see cref="RequestReplyWorkload"/> driven by the C generator: a thread per client making one
/// <c>natsConnection_Request</c> at a time, services answering from their callbacks (in a queue group when asked); the
/// connections send at once (<c>SendAsap</c>) rather than through libnats's flusher. Units: round trips.
/// </summary>
internal sealed class CRequestReplyWorkload(int payloadSize, int clients, int services, bool queueGroup) : IWorkload
{
    public long CalibrationCount => 1_000;

    public long SmokeCount => 100;

    public bool HasLatency => true;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        var result = CLoadGenerator.Run(
            ["reqrep", CWorkloadArguments.Url(server), subject + ".svc", CWorkloadArguments.Number(payloadSize), CWorkloadArguments.Number(count), CWorkloadArguments.Number(clients), CWorkloadArguments.Number(services), queueGroup ? "1" : "0"],
            cancellationToken);
        return new Measurement(result.Units, result.Units * payloadSize, result.Elapsed, new LatencySummary(result.P50Microseconds, result.P99Microseconds));
    }
}

internal static class CWorkloadArguments
{
    public static string Url(NatsEndpoint server) => server.Transport == NatsTransport.Tcp
        ? $"nats://{server.Address}"
        : throw new NotSupportedException("The C generator drives bare TCP rows only");

    public static string Number(long value) => value.ToString(CultureInfo.InvariantCulture);
}
