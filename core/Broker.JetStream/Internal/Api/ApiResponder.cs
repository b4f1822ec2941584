using Broker.JetStream.Internal.Events;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Sends the <c>$JS.API</c> responses and counts them (nats-server <c>sendAPIResponse</c> / <c>sendAPIErrResponse</c>,
/// with the account's <c>trackAPI</c> / <c>trackAPIErr</c>): every reply counts once, an error reply once more as an
/// error. The counts are what <c>$JS.API.INFO</c> and <c>/jsz</c> report as <c>api.total</c> and <c>api.errors</c>.
/// Every response is then audited on <c>$JS.EVENT.ADVISORY.API</c> (<see cref="JetStreamAdvisories.ApiAudit"/>).
/// </summary>
internal sealed class ApiResponder(Action<string?, byte[]> send, JetStreamAdvisories? advisories = null)
{
    private long total;
    private long errors;

    /// <summary>Responses sent, errors included.</summary>
    public long Total => Interlocked.Read(ref total);

    /// <summary>Responses sent with an error.</summary>
    public long Errors => Interlocked.Read(ref errors);

    /// <summary>Counts <paramref name="response"/> and sends it to the request's reply subject.</summary>
    public void Reply(ApiRequest request, ApiResponse response)
    {
        Interlocked.Increment(ref total);
        if (response.Error is not null)
        {
            Interlocked.Increment(ref errors);
        }

        var body = response.ToBytes();
        send(request.Reply, body);
        advisories?.ApiAudit(request, body);
    }
}
