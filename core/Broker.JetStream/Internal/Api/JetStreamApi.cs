namespace Broker.JetStream.Internal.Api;

/// <summary>
/// The <c>$JS.API</c> service (nats-server <c>jetstream_api.go</c>): wires the collaborators and takes the requests
/// of the engine's API queue for one account. <see cref="ApiRouter"/> routes a request by subject to the handlers of its area
/// (<see cref="AccountRequests"/>, <see cref="StreamRequests"/>, <see cref="MessageRequests"/>,
/// <see cref="ConsumerRequests"/>); they read bodies with <see cref="ApiRequestReader"/>, page lists with
/// <see cref="ApiPager"/> and answer through <see cref="ApiResponder"/>, which counts the replies. Each answers with
/// nats-server's response type, field names and error codes.
/// </summary>
internal sealed class JetStreamApi
{
    private readonly ApiResponder responder;
    private readonly ApiRouter router;

    public JetStreamApi(JetStreamAccount account)
    {
        responder = new ApiResponder(account.Reply, account.Advisories);
        var reader = new ApiRequestReader(account.Options);
        var streams = new StreamRequests(account, reader, responder);
        router = new ApiRouter(
            responder,
            new AccountRequests(account, responder),
            streams,
            new MessageRequests(account.FindStream, reader, responder),
            new ConsumerRequests(account.FindStream, new ConsumerCreator(account.Options, account.Interest, account), reader, responder, account.Logger),
            new Snapshots.SnapshotRequests(account, streams, reader, responder));
    }

    /// <summary>API responses sent, errors included (nats-server's account <c>api.total</c>).</summary>
    public long Total => responder.Total;

    /// <summary>API responses sent with an error (<c>api.errors</c>).</summary>
    public long Errors => responder.Errors;

    /// <summary>Answers one request (or, for subjects a single nats-server does not answer, nothing).</summary>
    public Task HandleAsync(ApiRequest request) => router.HandleAsync(request);
}
