using System.Text;
using Broker.JetStream.Internal;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Api;

/// <summary>The responder sends each response to the request's reply subject and counts it, errors apart.</summary>
public class ApiResponderTests
{
    [Fact]
    public void Every_reply_is_sent_and_counted_and_errors_are_counted_apart()
    {
        var sent = new List<(string? Reply, string Body)>();
        var responder = new ApiResponder((reply, body) => sent.Add((reply, Encoding.UTF8.GetString(body))));

        responder.Reply(new ApiRequest("$JS.API.INFO", "_INBOX.1", [], []), new ApiResponse("account_info_response"));
        responder.Reply(new ApiRequest("$JS.API.STREAM.INFO.X", "_INBOX.2", [], []), new ApiResponse("stream_info_response").WithError(ApiErrors.StreamNotFound));
        responder.Reply(new ApiRequest("$JS.API.STREAM.INFO.X", null, [], []), new ApiResponse("stream_info_response").WithError(ApiErrors.StreamNotFound));

        Assert.Equal(3, responder.Total);
        Assert.Equal(2, responder.Errors);
        Assert.Equal(("_INBOX.1", """{"type":"io.nats.jetstream.api.v1.account_info_response"}"""), sent[0]);
        Assert.Equal(("_INBOX.2", """{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}"""), sent[1]);
        Assert.Null(sent[2].Reply);
    }
}
