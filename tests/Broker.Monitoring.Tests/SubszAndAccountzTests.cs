using System.Net;

namespace Broker.Monitoring.Tests;

/// <summary>/subsz (subject index statistics, the list, the <c>test</c> filter) and /accountz (the global account).</summary>
public sealed class SubszAndAccountzTests
{
    [Fact(Timeout = 30_000)]
    public async Task Reports_index_statistics_and_lists_subscriptions_matching_a_test_subject()
    {
        // Without the system account, whose own subscriptions (its request services) count too, as nats-server's do.
        await using var broker = await MonitoredBroker.StartAsync(o => o.NoSystemAccount = true);
        await using var client = await broker.ConnectAsync();
        await client.SendAsync("SUB foo.bar 1\r\nSUB foo.* 2\r\nSUB foo.> q 3\r\nSUB baz 4\r\nPUB foo.bar 1\r\nx\r\nPUB foo.bar 1\r\ny\r\n");
        await client.PingAndCollectAsync();

        // Without a list nats-server writes the statistics alone.
        var subsz = await broker.GetJsonAsync("/subsz");
        Assert.False(subsz.TryGetProperty("server_id", out _));
        Assert.Equal(4, subsz.GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(4, subsz.GetProperty("num_inserts").GetInt64());
        Assert.Equal(0, subsz.GetProperty("num_removes").GetInt64());
        Assert.Equal(2, subsz.GetProperty("num_matches").GetInt64());
        Assert.Equal(0.5, subsz.GetProperty("cache_hit_rate").GetDouble());
        Assert.Equal(1, subsz.GetProperty("num_cache").GetInt32());
        Assert.Equal(3, subsz.GetProperty("max_fanout").GetInt32());
        Assert.False(subsz.TryGetProperty("total", out _));
        Assert.False(subsz.TryGetProperty("subscriptions_list", out _));

        var listed = await broker.GetJsonAsync("/subsz?subs=1&test=foo.bar");
        Assert.Equal(broker.Server.ServerId, listed.GetProperty("server_id").GetString());
        Assert.Equal(3, listed.GetProperty("total").GetInt32());
        var subjects = listed.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetProperty("subject").GetString()).Order().ToList();
        Assert.Equal(["foo.*", "foo.>", "foo.bar"], subjects);
        var first = listed.GetProperty("subscriptions_list")[0];
        Assert.Equal("$G", first.GetProperty("account").GetString());
        Assert.Equal(2, first.GetProperty("msgs").GetInt64());

        var page = await broker.GetJsonAsync("/subsz?subs=true&offset=1&limit=2");
        Assert.Equal(2, page.GetProperty("total").GetInt32());
        Assert.Equal(2, page.GetProperty("subscriptions_list").GetArrayLength());
        Assert.Equal(2, page.GetProperty("limit").GetInt32());

        Assert.Equal(4, (await broker.GetJsonAsync("/subscriptionsz?subs=1")).GetProperty("total").GetInt32());
        var other = await broker.GetJsonAsync("/subsz?subs=1&acc=OTHER");
        Assert.Equal(0, other.GetProperty("num_subscriptions").GetInt32());
        Assert.False(other.TryGetProperty("subscriptions_list", out _));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_wildcard_test_subject_is_refused()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var (status, body, response) = await broker.GetAsync("/subsz?subs=1&test=foo.*");
        response.Dispose();
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("invalid test subject, must be valid publish subject: foo.*", body);
    }

    [Fact(Timeout = 30_000)]
    public async Task In_process_subscriptions_are_listed_too()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var bus = broker.Broker.Bus.CreateClient();
        using var subscription = bus.Subscribe("svc.time", null, (in Broker.Abstractions.BusMessage _) => { });
        var listed = await broker.GetJsonAsync("/subsz?subs=1&test=svc.time");
        Assert.Equal("svc.time", listed.GetProperty("subscriptions_list")[0].GetProperty("subject").GetString());
    }

    [Fact(Timeout = 30_000)]
    public async Task Accountz_lists_the_global_account_and_details_it()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var client = await broker.ConnectAsync();
        await client.SendAsync("SUB foo 1\r\n");
        await client.PingAndCollectAsync();

        // The default system account is listed too, and named (nats-server creates it unless no_system_account).
        var accountz = await broker.GetJsonAsync("/accountz");
        Assert.Equal(["$G", "$SYS"], accountz.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal));
        Assert.Equal("$SYS", accountz.GetProperty("system_account").GetString());
        Assert.False(accountz.TryGetProperty("account_detail", out _));

        var detail = (await broker.GetJsonAsync("/accountz?acc=" + Uri.EscapeDataString("$G"))).GetProperty("account_detail");
        Assert.Equal("$G", detail.GetProperty("account_name").GetString());
        Assert.Equal(1, detail.GetProperty("client_connections").GetInt32());

        // The client's subscription and the three system imports every account has (nats-server registerSystemImports).
        Assert.Equal(4, detail.GetProperty("subscriptions").GetInt32());
        Assert.True(detail.GetProperty("complete").GetBoolean());
        Assert.False(detail.GetProperty("expired").GetBoolean());
        Assert.False(detail.GetProperty("jetstream_enabled").GetBoolean());
        Assert.Equal(4, detail.GetProperty("sublist_stats").GetProperty("num_subscriptions").GetInt32());

        var (status, body, response) = await broker.GetAsync("/accountz?acc=NOPE");
        response.Dispose();
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Account NOPE does not exist", body);
    }

    [Fact(Timeout = 30_000)]
    public async Task Healthz_is_ok_and_compact_while_the_listeners_accept()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var (status, body, response) = await broker.GetAsync("/healthz");
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("{\"status\":\"ok\"}", body);
        Assert.Equal("*", response.Headers.GetValues("Access-Control-Allow-Origin").Single());
        response.Dispose();

        (status, body, response) = await broker.GetAsync("/healthz?js-enabled-only=true&details=1");
        response.Dispose();
        Assert.Equal(HttpStatusCode.OK, status);

        (status, body, response) = await broker.GetAsync("/healthz?details=perhaps");
        response.Dispose();
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.StartsWith("Error decoding boolean for 'details'", body, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Index_page_links_every_endpoint_under_the_base_path()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.Monitoring.BasePath = "/nats/");
        var (status, body, response) = await broker.GetAsync("/nats");
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
        response.Dispose();
        foreach (var endpoint in new[] { "varz", "connz", "subsz", "accountz", "accstatz", "healthz", "metrics" })
        {
            Assert.Contains("href=\"/nats/" + endpoint + "\"", body, StringComparison.Ordinal);
        }

        Assert.Equal(broker.Server.ServerId, (await broker.GetJsonAsync("/nats/varz")).GetProperty("server_id").GetString());
        (status, _, response) = await broker.GetAsync("/varz");
        response.Dispose();
        Assert.Equal(HttpStatusCode.NotFound, status);
        Assert.Equal("/nats/", (await broker.GetJsonAsync("/nats/varz")).GetProperty("http_base_path").GetString());
    }
}
