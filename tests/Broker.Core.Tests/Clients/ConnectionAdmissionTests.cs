using Broker.Core.Internal.Clients;

namespace Broker.Core.Tests.Clients;

/// <summary>The places max_connections allows: taken atomically, given back, and 0 and negative limits as nats-server reads them.</summary>
public class ConnectionAdmissionTests
{
    [Fact(Timeout = 30_000)]
    public async Task Threads_taking_places_together_get_exactly_the_limit()
    {
        const int limit = 5;
        for (var round = 0; round < 50; round++)
        {
            var admission = new ConnectionAdmission();
            using var start = new ManualResetEventSlim();
            var takers = Enumerable.Range(0, 8).Select(_ => Task.Run(() =>
            {
                start.Wait();
                return Enumerable.Range(0, 4).Count(_ => admission.TryTake(limit));
            })).ToList();
            start.Set();
            Assert.Equal(limit, (await Task.WhenAll(takers)).Sum());
            Assert.Equal(limit, admission.Taken);
        }
    }

    [Fact]
    public void A_place_given_back_can_be_taken_again()
    {
        var admission = new ConnectionAdmission();
        Assert.True(admission.TryTake(1));
        Assert.False(admission.TryTake(1));
        admission.Release();
        Assert.True(admission.TryTake(1));
    }

    [Fact]
    public void Zero_stands_for_the_default_and_a_negative_limit_for_none()
    {
        Assert.Equal(65536, ConnectionAdmission.Effective(0));
        Assert.Equal(-1, ConnectionAdmission.Effective(-1));
        var admission = new ConnectionAdmission();
        Assert.Equal(65536, Enumerable.Range(0, 70_000).Count(_ => admission.TryTake(0)));
        Assert.All(Enumerable.Range(0, 1000), _ => Assert.True(admission.TryTake(-1)));
        Assert.False(ConnectionAdmission.Exceeds(1_000_000, -1));
        Assert.True(ConnectionAdmission.Exceeds(65537, 0));
        Assert.False(ConnectionAdmission.Exceeds(65536, 0));
        new BrokerOptions { MaxConnections = -1 }.Validate();
    }
}
