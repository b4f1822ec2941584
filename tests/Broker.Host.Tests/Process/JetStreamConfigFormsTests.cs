using System.Text.Json;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Host.Tests.Process;

/// <summary>
/// Every way nats-server's configuration turns JetStream on or off, given to nats-server 2.9.10 and to the host: the
/// same <c>$JS.API.INFO</c> answer (or the same "no responders"), the same domain, the same refusals.
/// </summary>
public sealed class JetStreamConfigFormsTests : IDisposable
{
    private readonly TempDirectory store = new("js-forms");

    public void Dispose() => store.Dispose();

    public static TheoryData<string, string> Forms => new()
    {
        { "an empty block", "jetstream {}" },
        { "a block with only the store directory", "jetstream { store_dir: \"$DIR\" }" },
        { "enabled", "jetstream: enabled" },
        { "enable", "jetstream: enable" },
        { "true", "jetstream: true" },
        { "disabled", "jetstream: disabled" },
        { "false", "jetstream: false" },
        { "a block that says enabled: false", "jetstream { enabled: false, store_dir: \"$DIR\" }" },
        { "a block that says enabled: true", "jetstream { enabled: true }" },
        { "store_dir alone at the top level", "store_dir: \"$DIR\"" },
        { "store_dir at the top level and an empty block", "store_dir: \"$DIR\"\njetstream {}" },
        { "limits by their short names", "jetstream { max_mem: 64MB, max_file: 1GB, store_dir: \"$DIR\" }" },
        { "limits by their long names", "jetstream { max_memory_store: 64MB, max_file_store: 1GB }" },
        { "a domain", "jetstream { domain: hub, store_dir: \"$DIR\" }" },
        { "the limits block", "jetstream { limits { max_ack_pending: 100, max_request_batch: 10, duplicate_window: \"1m\" } }" },
    };

    public static TheoryData<string, string, string> Refusals => new()
    {
        { "store_dir twice", "store_dir: \"$DIR\"\njetstream { store_dir: \"$DIR\" }", "Duplicate 'store_dir' configuration" },
        { "an unknown key", "jetstream { bogus: 1 }", "unknown field \"bogus\"" },
        { "a string that is no switch", "jetstream: maybe", "Expected 'enabled' or 'disabled' for string value, got 'maybe'" },
        { "an invalid domain", "jetstream { domain: \"a.b\" }", "invalid domain name" },
    };

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Forms))]
    public async Task The_form_turns_JetStream_on_or_off_as_nats_server_does(string form, string conf)
    {
        var text = conf.Replace("$DIR", store.Path.Replace("\\", "/", StringComparison.Ordinal), StringComparison.Ordinal);
        string expected;
        await using (var reference = await ReferenceServer.StartAsync(text))
        {
            expected = await DescribeAsync(reference.Url);
        }

        await using var ours = await StartOursAsync(text);
        var actual = await DescribeAsync($"nats://127.0.0.1:{ours.EndPoint("client").Port}");
        Assert.True(expected == actual, $"{form}: nats-server {expected}, broker {actual}");
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Refusals))]
    public async Task A_bad_form_is_refused_as_nats_server_refuses_it(string form, string conf, string message)
    {
        var text = conf.Replace("$DIR", store.Path.Replace("\\", "/", StringComparison.Ordinal), StringComparison.Ordinal);
        var path = store.Write("bad.conf", text);
        var reference = await ExternalProcess.RunAsync(ReferenceServer.BinaryPath!, ["-c", path], TimeSpan.FromSeconds(30));
        Assert.True(reference.ExitCode != 0, $"{form}: nats-server started");
        Assert.Contains(message, reference.ErrorText + reference.Output, StringComparison.Ordinal);

        await using var ours = HostProcess.Start(["-a", "127.0.0.1", "-p", "-1", "-c", path]);
        Assert.Equal(1, await ours.WaitForExitAsync(HostProcess.StartTimeout));
        Assert.Contains(message, ours.Output, StringComparison.Ordinal);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("BROKER_PLUGINS__JETSTREAM", "enabled", "on")]
    [InlineData("BROKER_PLUGINS__JETSTREAM", "false", "off")]
    [InlineData("BROKER_PLUGINS__JETSTREAM__ENABLED", "true", "on")]
    [InlineData("BROKER_PLUGINS__JETSTREAM__DOMAIN", "edge", "on, domain edge")]
    [InlineData("BROKER_PLUGINS__JETSTREAM__STORE_DIR", "$DIR", "off")]
    public async Task The_environment_has_the_same_forms(string variable, string value, string expected)
    {
        var environment = new Dictionary<string, string> { [variable] = value.Replace("$DIR", store.Path, StringComparison.Ordinal) };
        await using var ours = await HostProcess.StartReadyAsync(environment: environment);
        var actual = await DescribeAsync($"nats://127.0.0.1:{ours.EndPoint("client").Port}");
        Assert.StartsWith(expected, actual, StringComparison.Ordinal);
    }

    [Fact(Timeout = 90_000)]
    public async Task The_limits_block_bounds_streams_and_consumers_as_in_nats_server()
    {
        const string Conf = "jetstream { limits { max_ack_pending: 100, max_request_batch: 10, duplicate_window: \"1m\" } }";
        List<string> expected;
        await using (var reference = await ReferenceServer.StartAsync(Conf))
        {
            expected = await LimitAnswersAsync(reference.Url);
        }

        await using var ours = await StartOursAsync(Conf);
        var actual = await LimitAnswersAsync($"nats://127.0.0.1:{ours.EndPoint("client").Port}");
        Assert.Contains("duplicates window can not be larger then server limit of 1m0s", expected[0], StringComparison.Ordinal);
        Assert.Equal(expected, actual);
    }

    private static async Task<List<string>> LimitAnswersAsync(string url)
    {
        await using var nats = await NatsClients.ConnectAsync(url);
        var tooLong = await ApiAsync(nats, "$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a"],"storage":"memory","duplicate_window":120000000000}""");
        var created = await ApiAsync(nats, "$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a"],"storage":"memory"}""");
        var batch = await ApiAsync(nats, "$JS.API.CONSUMER.DURABLE.CREATE.A.p", """{"stream_name":"A","config":{"durable_name":"p","ack_policy":"explicit","max_batch":11}}""");
        var ackPending = await ApiAsync(nats, "$JS.API.CONSUMER.DURABLE.CREATE.A.p", """{"stream_name":"A","config":{"durable_name":"p","ack_policy":"explicit","max_ack_pending":101}}""");
        var pull = await ApiAsync(nats, "$JS.API.CONSUMER.DURABLE.CREATE.A.p", """{"stream_name":"A","config":{"durable_name":"p","ack_policy":"explicit"}}""");
        return
        [
            tooLong.GetProperty("error").ToString(),
            created.GetProperty("config").GetProperty("duplicate_window").ToString(),
            batch.GetProperty("error").ToString(),
            ackPending.GetProperty("error").ToString(),
            pull.GetProperty("config").GetProperty("max_batch").ToString(),
            pull.GetProperty("config").GetProperty("max_ack_pending").ToString(),
        ];
    }

    private async Task<HostProcess> StartOursAsync(string text)
    {
        var path = store.Write($"broker-{Guid.NewGuid():N}.conf", text);
        return await HostProcess.StartReadyAsync(["-c", path]);
    }

    // "off", or "on" with the domain: what a client learns from $JS.API.INFO (and from the domain's own API prefix).
    private static async Task<string> DescribeAsync(string url)
    {
        await using var nats = await NatsClients.ConnectAsync(url);
        JsonElement info;
        try
        {
            info = await ApiAsync(nats, "$JS.API.INFO", "");
        }
        catch (NatsNoRespondersException)
        {
            return "off";
        }

        if (!info.TryGetProperty("domain", out var domain))
        {
            return "on";
        }

        var viaDomain = await ApiAsync(nats, $"$JS.{domain.GetString()}.API.INFO", "");
        return $"on, domain {domain.GetString()}, answered on its prefix: {viaDomain.TryGetProperty("memory", out _)}";
    }

    private static async Task<JsonElement> ApiAsync(NatsConnection nats, string subject, string body)
    {
        var reply = await nats.RequestAsync<string, string>(subject, body, replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        return JsonDocument.Parse(reply.Data ?? "{}").RootElement.Clone();
    }
}
