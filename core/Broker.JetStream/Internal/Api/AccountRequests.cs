using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// <c>$JS.API.INFO</c> (nats-server <c>jsAccountInfoRequest</c>): the account's usage, its streams and consumers, its
/// domain and the API's own counts.
/// </summary>
internal sealed class AccountRequests(JetStreamEngine engine, ApiResponder responder)
{
    public void Info(ApiRequest request)
    {
        var streams = engine.StreamsByName();
        var info = new AccountInfoModel
        {
            Memory = (ulong)Math.Max(0, engine.MemoryUsed),
            Storage = (ulong)Math.Max(0, engine.StorageUsed),
            Streams = streams.Count,
            Consumers = streams.Sum(s => s.ConsumerCount),
            Domain = engine.Options.Domain,
            Api = new ApiStats { Total = (ulong)responder.Total, Errors = (ulong)responder.Errors },
        };
        responder.Reply(request, new ApiResponse("account_info_response").With(info, JetStreamJson.Context.AccountInfoModel));
    }
}
