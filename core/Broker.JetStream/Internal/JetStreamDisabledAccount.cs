using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal;

/// <summary>
/// An account without JetStream while the server has it (<c>$G</c> once accounts are configured, and every account
/// whose configuration does not enable it). As nats-server 2.9.10, whose API handlers check the account first, each
/// <c>$JS.API</c> request there is answered with error 10039 "JetStream not enabled for account" in the response type
/// of its subject (a consumer create whose body is not JSON gets "invalid JSON" first; stepdowns and peer removals the
/// clustering error); subjects no handler serves (pull requests, direct gets, unknown ones) get no reply. Each answer is
/// audited on <c>$JS.EVENT.ADVISORY.API</c> in the account, as nats-server's <c>sendAPIErrResponse</c> does.
/// </summary>
internal sealed class JetStreamDisabledAccount : IAsyncDisposable, ISubjectInterest
{
    private static readonly ApiError ClusterRequired = new(503, 10010, "JetStream clustering support required");
    private static readonly byte[] InvalidConsumerJson = new ApiResponse("consumer_create_response").WithError(ApiErrors.InvalidJson).ToBytes();
    private static readonly Dictionary<string, byte[]> Replies = new(StringComparer.Ordinal)
    {
        ["INFO"] = NotEnabled("account_info_response"),
        ["STREAM.CREATE"] = NotEnabled("stream_create_response"),
        ["STREAM.UPDATE"] = NotEnabled("stream_update_response"),
        ["STREAM.NAMES"] = NotEnabled("stream_names_response", ApiPager.None, ("streams", "null")),
        ["STREAM.LIST"] = NotEnabled("stream_list_response", ApiPager.None, ("streams", "[]")),
        ["STREAM.INFO"] = NotEnabled("stream_info_response", ApiPager.None),
        ["STREAM.DELETE"] = NotEnabled("stream_delete_response"),
        ["STREAM.PURGE"] = NotEnabled("stream_purge_response", null, ("purged", "0")),
        ["STREAM.MSG.GET"] = NotEnabled("stream_msg_get_response"),
        ["STREAM.MSG.DELETE"] = NotEnabled("stream_msg_delete_response"),
        ["STREAM.SNAPSHOT"] = NotEnabled("stream_snapshot_response"),
        ["STREAM.RESTORE"] = NotEnabled("stream_restore_response", null, ("deliver_subject", "\"\"")),
        ["STREAM.LEADER.STEPDOWN"] = new ApiResponse("stream_leader_stepdown_response").WithError(ClusterRequired).ToBytes(),
        ["STREAM.PEER.REMOVE"] = new ApiResponse("stream_remove_peer_response").WithError(ClusterRequired).ToBytes(),
        ["CONSUMER.CREATE"] = NotEnabled("consumer_create_response"),
        ["CONSUMER.DELETE"] = NotEnabled("consumer_delete_response"),
        ["CONSUMER.INFO"] = NotEnabled("consumer_info_response"),
        ["CONSUMER.NAMES"] = NotEnabled("consumer_names_response", ApiPager.None, ("consumers", "[]")),
        ["CONSUMER.LIST"] = NotEnabled("consumer_list_response", ApiPager.None, ("consumers", "[]")),
        ["CONSUMER.LEADER.STEPDOWN"] = new ApiResponse("consumer_leader_stepdown_response").WithError(ClusterRequired).ToBytes(),
    };

    private readonly IBusClient client;
    private readonly IBusSubscription subscription;
    private readonly JetStreamAdvisories advisories;

    /// <param name="bus">The broker's bus.</param>
    /// <param name="account">The account without JetStream.</param>
    /// <remarks>Its replies are not counted in /jsz <c>api</c> (checked: nats-server counts them nowhere).</remarks>
    /// <param name="domain">The served JetStream domain (the audit's <c>domain</c>), or null.</param>
    /// <param name="identity">The server's id and name (the audit's <c>server</c>), or null.</param>
    public JetStreamDisabledAccount(IMessageBus bus, string account, string? domain = null, ServerIdentity? identity = null)
    {
        Account = account;
        client = bus.CreateClient(new BusClientOptions { Name = "JetStream API", Account = account == BrokerAccount.GlobalName ? null : account });
        advisories = new JetStreamAdvisories(account, this, domain, identity, (subject, body) => client.Publish(subject, default, default, new ReadOnlySequence<byte>(body)));
        subscription = client.Subscribe(ApiSubjects.All, null, OnRequest);
    }

    /// <summary>The account's name.</summary>
    public string Account { get; }

    public async ValueTask DisposeAsync()
    {
        subscription.Dispose();
        await client.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>The reply nats-server sends for a request on <paramref name="subject"/> in such an account, or null for none.</summary>
    public static byte[]? ReplyTo(string subject, ReadOnlySpan<byte> payload)
    {
        var tokens = ApiSubjects.Tokens(subject);
        if (tokens.Length < 3)
        {
            return null;
        }

        var key = (tokens[2], tokens.Length > 3 ? tokens[3] : "", tokens.Length) switch
        {
            ("INFO", _, 3) => "INFO",
            ("STREAM", "CREATE" or "UPDATE" or "INFO" or "DELETE" or "PURGE" or "SNAPSHOT" or "RESTORE", 5) => "STREAM." + tokens[3],
            ("STREAM", "NAMES" or "LIST", 4) => "STREAM." + tokens[3],
            ("STREAM", "MSG" or "LEADER" or "PEER", 6) => "STREAM." + tokens[3] + "." + tokens[4],
            ("CONSUMER", "CREATE", >= 5) or ("CONSUMER", "DURABLE", >= 5) => "CONSUMER.CREATE",
            ("CONSUMER", "DELETE" or "INFO", 6) => "CONSUMER." + tokens[3],
            ("CONSUMER", "NAMES" or "LIST", 5) => "CONSUMER." + tokens[3],
            ("CONSUMER", "LEADER", 7) => "CONSUMER.LEADER." + tokens[4],
            _ => null,
        };
        if (key is null || !Replies.TryGetValue(key, out var reply))
        {
            return null;
        }

        // nats-server decodes a consumer create's body before it looks at the account.
        return key == "CONSUMER.CREATE" && !IsJson(payload) ? InvalidConsumerJson : reply;
    }

    private static byte[] NotEnabled(string type, ApiPaged? paged = null, (string Name, string Json)? field = null)
    {
        var response = new ApiResponse(type).WithError(ApiErrors.NotEnabledForAccount);
        if (paged is not null)
        {
            response.With(paged);
        }

        if (field is { } extra)
        {
            response.WithField(extra.Name, extra.Json);
        }

        return response.ToBytes();
    }

    private static bool IsJson(ReadOnlySpan<byte> payload)
    {
        try
        {
            var reader = new Utf8JsonReader(payload);
            return JsonDocument.TryParseValue(ref reader, out var document) && DisposeTrue(document);
        }
        catch (JsonException)
        {
            return false;
        }
    }

    private static bool DisposeTrue(JsonDocument? document)
    {
        document?.Dispose();
        return true;
    }

    private void OnRequest(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        var payload = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        var subject = Encoding.UTF8.GetString(message.Subject);
        if (ReplyTo(subject, payload) is { } reply)
        {
            client.Publish(message.ReplyTo, default, default, new ReadOnlySequence<byte>(reply));
            advisories.ApiAudit(new ApiRequest(subject, null, message.Headers.IsEmpty ? [] : message.Headers.ToArray(), payload.ToArray()), reply);
        }
    }

    /// <summary>Interest in the account (the audit is built only for a subscriber).</summary>
    public bool HasInterest(ReadOnlySpan<byte> subject) => client.HasInterest(subject);
}
