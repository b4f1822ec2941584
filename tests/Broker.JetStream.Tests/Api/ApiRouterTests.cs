using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Snapshots;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.JetStream.Tests.Api;

/// <summary>
/// The router over handlers of an engine with no streams (never started, no bus): which subjects are answered, with
/// which response type, and the refusals it answers itself; replies are compared byte for byte.
/// </summary>
public sealed class ApiRouterTests : IDisposable
{
    private readonly TempDirectory directory = new("js-router-");
    private readonly List<(string? Reply, string Body)> sent = [];
    private readonly ApiResponder responder;
    private readonly ApiRouter router;

    public ApiRouterTests()
    {
        var engine = new JetStreamAccount(
            new JetStreamEngine(new JetStreamOptions { StoreDirectory = directory.Path }, null!, Array.Empty<IStreamStoreProvider>(), null, NullLoggerFactory.Instance),
            BrokerAccount.GlobalName,
            AccountJetStreamLimits.Unlimited);
        responder = new ApiResponder((reply, body) => sent.Add((reply, Encoding.UTF8.GetString(body))));
        var reader = new ApiRequestReader(engine.Options);
        var streams = new StreamRequests(engine, reader, responder);
        router = new ApiRouter(
            responder,
            new AccountRequests(engine, responder),
            streams,
            new MessageRequests(engine.FindStream, reader, responder),
            new ConsumerRequests(engine.FindStream, new ConsumerCreator(engine.Options, null), reader, responder),
            new SnapshotRequests(engine, streams, reader, responder));
    }

    public void Dispose() => directory.Dispose();

    [Theory(Timeout = 10_000)]
    [InlineData("$JS.API.STREAM.NAMES", "", """{"type":"io.nats.jetstream.api.v1.stream_names_response","total":0,"offset":0,"limit":1024,"streams":null}""")]
    [InlineData("$JS.API.STREAM.LIST", "", """{"type":"io.nats.jetstream.api.v1.stream_list_response","total":0,"offset":0,"limit":256,"streams":[]}""")]
    [InlineData("$JS.API.STREAM.NAMES", "{bad", """{"type":"io.nats.jetstream.api.v1.stream_names_response","error":{"code":400,"err_code":10025,"description":"invalid JSON"},"total":0,"offset":0,"limit":0}""")]
    [InlineData("$JS.API.STREAM.INFO.X", "", """{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"},"total":0,"offset":0,"limit":0}""")]
    [InlineData("$JS.API.STREAM.MSG.GET.X", """{"seq":1}""", """{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}""")]
    [InlineData("$JS.API.CONSUMER.NAMES.X", "", """{"type":"io.nats.jetstream.api.v1.consumer_names_response","error":{"code":404,"err_code":10059,"description":"stream not found"},"total":0,"offset":0,"limit":0,"consumers":[]}""")]
    [InlineData("$JS.API.CONSUMER.LIST.X", "{bad", """{"type":"io.nats.jetstream.api.v1.consumer_list_response","error":{"code":400,"err_code":10025,"description":"invalid JSON"},"total":0,"offset":0,"limit":0,"consumers":[]}""")]
    [InlineData("$JS.API.CONSUMER.INFO.X.C", "", """{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}""")]
    [InlineData("$JS.API.STREAM.SNAPSHOT.X", "", """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10003,"description":"bad request"}}""")]
    [InlineData("$JS.API.STREAM.SNAPSHOT.X", """{"deliver_subject":"d"}""", """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}""")]
    [InlineData("$JS.API.STREAM.RESTORE.X", "", """{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":400,"err_code":10003,"description":"bad request"},"deliver_subject":""}""")]
    [InlineData("$JS.API.STREAM.LEADER.STEPDOWN.X", "", """{"type":"io.nats.jetstream.api.v1.stream_leader_stepdown_response","error":{"code":503,"err_code":10010,"description":"JetStream clustering support required"}}""")]
    [InlineData("$JS.API.CONSUMER.LEADER.STEPDOWN.X.C", "", """{"type":"io.nats.jetstream.api.v1.consumer_leader_stepdown_response","error":{"code":503,"err_code":10010,"description":"JetStream clustering support required"}}""")]
    public async Task A_request_is_answered_by_its_handler(string subject, string body, string expected)
    {
        await router.HandleAsync(new ApiRequest(subject, "_INBOX.r", [], Encoding.UTF8.GetBytes(body)));

        Assert.Equal([("_INBOX.r", expected)], sent);
    }

    [Theory(Timeout = 10_000)]
    [InlineData("$JS.API")]
    [InlineData("$JS.API.NOPE")]
    [InlineData("$JS.API.INFO.X")]
    [InlineData("$JS.API.STREAM.NAMES.X")]
    [InlineData("$JS.API.STREAM.MSG.GET")]
    [InlineData("$JS.API.CONSUMER.DELETE.X")]
    [InlineData("$JS.API.META.LEADER.STEPDOWN")]
    public async Task Subjects_a_single_nats_server_does_not_answer_get_no_reply(string subject)
    {
        await router.HandleAsync(new ApiRequest(subject, "_INBOX.r", [], []));

        Assert.Empty(sent);
        Assert.Equal(0, responder.Total);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_higher_required_api_level_is_refused_with_the_requests_own_response_type()
    {
        var headers = "NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n"u8.ToArray();

        await router.HandleAsync(new ApiRequest("$JS.API.CONSUMER.DURABLE.CREATE.X.D", "_INBOX.r", headers, """{"stream_name":"X","config":{"durable_name":"D"}}"""u8.ToArray()));
        await router.HandleAsync(new ApiRequest("$JS.API.NOPE", "_INBOX.r", headers, []));

        Assert.Equal([("_INBOX.r", """{"type":"io.nats.jetstream.api.v1.consumer_create_response","error":{"code":412,"err_code":10185,"description":"JetStream minimum api level required"}}""")], sent);
        Assert.Equal(1, responder.Errors);
    }

    [Fact(Timeout = 10_000)]
    public async Task Account_info_reports_the_api_counts_before_its_own_reply()
    {
        await router.HandleAsync(new ApiRequest("$JS.API.STREAM.INFO.X", "_INBOX.r", [], []));
        await router.HandleAsync(new ApiRequest("$JS.API.INFO", "_INBOX.r", [], []));

        Assert.Contains("\"api\":{\"level\":1,\"total\":1,\"errors\":1}", sent[1].Body, StringComparison.Ordinal);
        Assert.StartsWith("{\"type\":\"io.nats.jetstream.api.v1.account_info_response\",", sent[1].Body, StringComparison.Ordinal);
        Assert.Equal(2, responder.Total);
    }
}
