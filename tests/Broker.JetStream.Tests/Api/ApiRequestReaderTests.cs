using System.Text;
using Broker.JetStream.Internal;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Api;

/// <summary>Request bodies: nats-server's empty request, JSON with its errors, strict mode, the optional list request.</summary>
public class ApiRequestReaderTests
{
    [Theory]
    [InlineData("", true)]
    [InlineData("  \r\n", true)]
    [InlineData("{}", true)]
    [InlineData(" { } ", true)]
    [InlineData("{\"a\":1}", false)]
    [InlineData("[]", false)]
    [InlineData("{bad", false)]
    public void Empty_is_no_body_or_an_empty_object(string body, bool empty) =>
        Assert.Equal(empty, ApiRequestReader.IsEmpty(Encoding.UTF8.GetBytes(body)));

    [Fact]
    public void Invalid_json_is_nats_servers_invalid_json_error()
    {
        var reader = new ApiRequestReader(new JetStreamOptions());

        Assert.False(reader.TryParse("{bad"u8.ToArray(), JetStreamJson.Context.PurgeRequest, out var value, out var error));

        Assert.Null(value);
        Assert.Equal(ApiErrors.InvalidJson, error);
    }

    [Fact]
    public void An_unknown_field_is_ignored_unless_strict_which_the_options_say_at_each_request()
    {
        var options = new JetStreamOptions();
        var reader = new ApiRequestReader(options);
        var body = """{"filter":"a","bogus":1}"""u8.ToArray();

        Assert.True(reader.TryParse(body, JetStreamJson.Context.PurgeRequest, out var lenient, out _));
        Assert.Equal("a", lenient!.Filter);

        options.Strict = true;
        Assert.False(reader.TryParse(body, JetStreamJson.Context.PurgeRequest, out _, out var error));
        Assert.Equal(new ApiError(400, 10025, "invalid JSON: json: unknown field \"bogus\""), error);
    }

    [Fact]
    public void A_list_request_may_be_empty_or_json_but_not_invalid()
    {
        var reader = new ApiRequestReader(new JetStreamOptions());

        Assert.True(reader.TryParseList(new ApiRequest("s", null, [], []), out var defaults));
        Assert.Equal(0, defaults.Offset);
        Assert.True(reader.TryParseList(new ApiRequest("s", null, [], """{"offset":5,"subject":"a.>"}"""u8.ToArray()), out var parsed));
        Assert.Equal((5, "a.>"), (parsed.Offset, parsed.Subject));
        Assert.False(reader.TryParseList(new ApiRequest("s", null, [], "{bad"u8.ToArray()), out _));
    }
}
