using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// <c>$JS.API.INFO</c> (nats-server <c>jsAccountInfoRequest</c>): the account's usage, its streams and consumers, its
/// domain and the API's own counts.
/// </summary>
internal sealed class AccountRequests(JetStreamAccount account, ApiResponder responder)
{
    public void Info(ApiRequest request)
    {
        var streams = account.StreamsByName();
        var info = new AccountInfoModel
        {
            Memory = (ulong)Math.Max(0, account.MemoryUsed),
            Storage = (ulong)Math.Max(0, account.StorageUsed),
            Streams = streams.Count,
            Consumers = streams.Sum(s => s.ConsumerCount),
            Limits = LimitsOf(account.Limits),
            Domain = account.Options.Domain,
            Api = new ApiStats { Total = (ulong)responder.Total, Errors = (ulong)responder.Errors },
        };
        responder.Reply(request, new ApiResponse("account_info_response").With(info, JetStreamJson.Context.AccountInfoModel));
    }

    /// <summary>The account's limits as nats-server reports them (<c>JetStreamAccountLimits</c>).</summary>
    public static AccountLimits LimitsOf(Broker.Abstractions.AccountJetStreamLimits limits) => new()
    {
        MaxMemory = limits.MaxMemory,
        MaxStorage = limits.MaxStorage,
        MaxStreams = limits.MaxStreams,
        MaxConsumers = limits.MaxConsumers,
        MaxAckPending = limits.MaxAckPending,
        MemoryMaxStreamBytes = limits.MemoryMaxStreamBytes,
        StorageMaxStreamBytes = limits.StorageMaxStreamBytes,
        MaxBytesRequired = limits.MaxBytesRequired,
    };
}
