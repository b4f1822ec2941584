using Broker.Abstractions;

namespace Broker.Core.Tests.Transport;

/// <summary>The feature bag: the first two features in fields, the rest in an array (issue 25); all found and replaced alike.</summary>
public sealed class ConnectionFeaturesTests
{
    [Fact]
    public void Features_beyond_the_first_two_are_kept_found_and_replaced()
    {
        var features = new ConnectionFeatures();
        Assert.Null(features.Get<string>());

        var listener = new ListenerDefinition { Name = "a", EndPoint = new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0), Protocol = "nats" };
        var credentials = new TransportCredentials();
        features.Set(listener);
        features.Set("second");
        features.Set(credentials);
        features.Set(new List<int> { 4 });

        Assert.Same(listener, features.Get<ListenerDefinition>());
        Assert.Equal("second", features.Get<string>());
        Assert.Same(credentials, features.Get<TransportCredentials>());
        Assert.Equal([4], features.Get<List<int>>()!);
        Assert.Null(features.Get<object>());

        // Replacing keeps one entry per type, wherever it is kept.
        var other = new ListenerDefinition { Name = "b", EndPoint = new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0), Protocol = "nats" };
        features.Set(other);
        features.Set("again");
        features.Set(new List<int> { 5 });
        Assert.Same(other, features.Get<ListenerDefinition>());
        Assert.Equal("again", features.Get<string>());
        Assert.Same(credentials, features.Get<TransportCredentials>());
        Assert.Equal([5], features.Get<List<int>>()!);
    }
}
