using System.Text;
using System.Text.Json.Nodes;
using Broker.Abstractions;
using Broker.JetStream.Internal;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Tests.Consumers;

namespace Broker.JetStream.Tests.Events;

/// <summary>
/// The account's advisories are built and published only for a subject someone listens to (the publish path of a
/// stream nobody watches pays one interest lookup), and the API audit's <c>client</c> is the request's
/// <c>Nats-Request-Info</c> when it came through an import.
/// </summary>
public sealed class JetStreamAdvisoriesTests
{
    private readonly TestInterest interest = new();
    private readonly List<(string Subject, string Body)> published = [];
    private readonly JetStreamAdvisories advisories;

    public JetStreamAdvisoriesTests()
    {
        advisories = new JetStreamAdvisories("A", interest, "hub", new ServerIdentity("NSERVERID", "n1"), (subject, body) =>
            published.Add((Encoding.UTF8.GetString(subject), Encoding.UTF8.GetString(body))));
    }

    [Fact]
    public void Nothing_is_published_without_a_subscriber_on_the_subject()
    {
        advisories.StreamAction("S", StreamActionKind.Create);
        advisories.ConsumerAction("S", "C", StreamActionKind.Delete);
        advisories.ApiAudit(new ApiRequest("$JS.API.INFO", "_INBOX.1", [], []), "{}"u8.ToArray());
        Assert.Empty(published);

        interest.Listening.Add("$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.C");
        advisories.StreamAction("S", StreamActionKind.Create);
        advisories.ConsumerAction("S", "C", StreamActionKind.Delete);
        var (subject, body) = Assert.Single(published);
        Assert.Equal("$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.C", subject);

        // The served domain comes last, as nats-server's Domain field.
        Assert.Equal("hub", JsonNode.Parse(body)!.AsObject().Last().Value!.GetValue<string>());
    }

    [Fact]
    public void The_audit_names_the_importing_requester_from_its_request_info_else_the_account()
    {
        interest.Listening.Add("$JS.EVENT.ADVISORY.API");
        var header = "NATS/1.0\r\nNats-Request-Info: {\"acc\":\"B\",\"rtt\":1500}\r\n\r\n"u8.ToArray();
        advisories.ApiAudit(new ApiRequest("$JS.API.INFO", "_INBOX.1", header, []), "{\"type\":\"x\"}"u8.ToArray());
        advisories.ApiAudit(new ApiRequest("$JS.API.STREAM.INFO.S", null, [], "{\"offset\":0}"u8.ToArray()), "{}"u8.ToArray());

        Assert.Equal(2, published.Count);
        var imported = JsonNode.Parse(published[0].Body)!;
        Assert.Equal("n1", (string?)imported["server"]);
        Assert.Equal("""{"acc":"B","rtt":1500}""", imported["client"]!.ToJsonString());
        Assert.False(imported.AsObject().ContainsKey("request"));
        Assert.Equal("{\"type\":\"x\"}", (string?)imported["response"]);

        var direct = JsonNode.Parse(published[1].Body)!;
        Assert.Equal("""{"acc":"A","server":"NSERVERID"}""", direct["client"]!.ToJsonString());
        Assert.Equal("{\"offset\":0}", (string?)direct["request"]);
    }
}
