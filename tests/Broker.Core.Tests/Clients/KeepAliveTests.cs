using Broker.Core.Internal.Clients;

namespace Broker.Core.Tests.Clients;

/// <summary>A connection's keep-alive: PINGs to idle clients, a stale close after ping_max unanswered, one measurement for busy ones.</summary>
public sealed class KeepAliveTests
{
    [Fact]
    public void An_idle_client_is_pinged_each_interval_and_closed_as_stale_after_ping_max()
    {
        var connection = new FakeKeepAliveConnection { MaxPingsOutstanding = 2 };
        using var keepAlive = new KeepAlive(connection);

        Assert.True(keepAlive.Tick(TimeSpan.Zero));
        Assert.True(keepAlive.Tick(TimeSpan.Zero));
        Assert.Equal(2, connection.Pings);
        Assert.Equal(2, keepAlive.PingsOutstanding);

        Assert.False(keepAlive.Tick(TimeSpan.Zero));
        Assert.Equal(1, connection.StaleCloses);
        Assert.Equal(2, connection.Pings);
    }

    [Fact]
    public void A_pong_clears_the_outstanding_pings_and_measures_the_round_trip()
    {
        var connection = new FakeKeepAliveConnection { MaxPingsOutstanding = 1 };
        using var keepAlive = new KeepAlive(connection);
        Assert.Equal(TimeSpan.Zero, keepAlive.RoundTrip);

        Assert.True(keepAlive.Tick(TimeSpan.Zero));
        Thread.Sleep(5);
        keepAlive.PongReceived();
        Assert.Equal(0, keepAlive.PingsOutstanding);
        Assert.True(keepAlive.RoundTrip > TimeSpan.Zero);

        // Answered, so the next interval's PING is not the one too many.
        Assert.True(keepAlive.Tick(TimeSpan.Zero));
        Assert.Equal(0, connection.StaleCloses);
    }

    [Fact]
    public void A_client_that_keeps_sending_gets_one_measurement_ping_and_is_never_stale()
    {
        var connection = new FakeKeepAliveConnection { MaxPingsOutstanding = 1 };
        using var keepAlive = new KeepAlive(connection);
        var interval = TimeSpan.FromHours(1);

        for (var i = 0; i < 5; i++)
        {
            keepAlive.InputReceived();
            Assert.True(keepAlive.Tick(interval));
        }

        Assert.Equal(1, connection.Pings);
        Assert.Equal(0, connection.StaleCloses);
        Assert.InRange(Environment.TickCount64 - keepAlive.LastInputTick, 0, 10_000);
    }

    [Fact]
    public void A_closed_connection_is_not_pinged_and_the_timer_stops()
    {
        var connection = new FakeKeepAliveConnection { IsClosed = true };
        using var keepAlive = new KeepAlive(connection);

        Assert.False(keepAlive.Tick(TimeSpan.Zero));
        Assert.Equal(0, connection.Pings);
    }

    [Fact(Timeout = 30_000)]
    public async Task After_connect_the_first_ping_comes_early()
    {
        // The interval is long; CONNECT brings the first PING forward to at most 2 s plus jitter.
        var connection = new FakeKeepAliveConnection { PingInterval = TimeSpan.FromMinutes(10) };
        using var keepAlive = new KeepAlive(connection);
        keepAlive.Start();
        keepAlive.RestartAfterConnect();

        await connection.FirstPing.Task.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(1, connection.Pings);
    }
}
