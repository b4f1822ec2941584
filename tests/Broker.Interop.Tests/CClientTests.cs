namespace Broker.Interop.Tests;

/// <summary>The C client (libnats, with headers and no-responders) against our broker and the reference nats-server.</summary>
public sealed class CClientTests(CClient client) : IClassFixture<CClient>
{
    [Theory(Timeout = 90_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Selftest_covers_pubsub_headers_wildcards_queues_autounsubscribe_and_no_responders(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var summary = ScenarioSummary.AssertOk(await client.RunAsync("selftest", server.Url));
        Assert.Equal(6, summary.GetProperty("checks").GetInt32());
    }

    [Theory(Timeout = 90_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Credentials_in_the_url_are_checked(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => (o.Authorization.User, o.Authorization.Password) = ("cuser", "cpass"),
            "authorization { user: cuser, password: cpass }");
        var withCredentials = server.Url.Replace("nats://", "nats://cuser:cpass@", StringComparison.Ordinal);
        ScenarioSummary.AssertOk(await client.RunAsync("selftest", withCredentials));

        var refused = await client.RunAsync("selftest", server.Url.Replace("nats://", "nats://cuser:wrong@", StringComparison.Ordinal));
        Assert.NotEqual(0, refused.ExitCode);
        Assert.Contains("Authorization Violation", refused.OutputLines[^1], StringComparison.OrdinalIgnoreCase);
    }

    [Fact(Timeout = 90_000)]
    public async Task Connection_failure_is_reported_not_swallowed()
    {
        var result = await client.RunAsync("selftest", $"nats://127.0.0.1:{Ports.GetFreePort()}");
        Assert.False(result.TimedOut, result.ToString());
        Assert.NotEqual(0, result.ExitCode);
        Assert.Contains("\"ok\":false", result.OutputLines[^1], StringComparison.Ordinal);
    }
}
