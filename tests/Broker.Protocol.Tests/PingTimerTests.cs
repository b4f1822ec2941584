namespace Broker.Protocol.Tests;

/// <summary>When the server PINGs a client: nats-server's processPingTimer and setFirstPingTimer.</summary>
public sealed class PingTimerTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Client_that_keeps_sending_gets_one_round_trip_ping_and_is_never_stale(ServerKind kind)
    {
        // nats-server forces one PING to measure the round trip, then skips PINGs while data keeps arriving within
        // the interval: a busy client is not closed as stale even if it never answers. (Our broker used to force a
        // PING on every tick until a PONG came, and closed such a client after ping_max ticks.)
        await using var server = await ServerUnderTest.StartAsync(
            kind, o => o.PingInterval = TimeSpan.FromMilliseconds(500), "ping_interval: \"500ms\"\n");
        await using var client = await server.ConnectAsync();
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        for (var i = 0; i < 25; i++)
        {
            await client.SendAsync("PUB busy 0\r\n\r\n");
            await Task.Delay(100);
        }

        var transcript = await client.PingAndCollectAsync(answerServerPings: false);
        Assert.False(transcript.Closed, transcript.ToString());
        Assert.Equal("PONG", transcript.Lines[^1]);
        Assert.Contains("PING", transcript.Lines);
        Assert.DoesNotContain(transcript.Lines, l => l.StartsWith("-ERR", StringComparison.Ordinal));
    }
}
