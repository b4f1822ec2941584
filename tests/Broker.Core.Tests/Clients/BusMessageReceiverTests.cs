using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;
using Broker.TestKit;

namespace Broker.Core.Tests.Clients;

/// <summary>
/// A subscription whose messages go to an object's own method (<see cref="IBusMessageReceiver"/>): the broker's client
/// holds the receiver itself, no delegate per subscription (64 B per idle MQTT session, issue 25), and delivers to it as
/// to a handler, in order.
/// </summary>
public sealed class BusMessageReceiverTests
{
    [Fact(Timeout = 30_000)]
    public async Task A_receiver_is_held_as_it_is_and_gets_the_messages_in_order()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var subscriber = broker.Bus.CreateClient();
        await using var publisher = broker.Bus.CreateClient();
        var receiver = new Receiver();

        using var subscription = subscriber.Subscribe("receive.>", null, receiver);
        Assert.Same(receiver, Assert.IsType<Subscription>(subscription).Handler);
        for (var i = 0; i < 3; i++)
        {
            publisher.Publish("receive." + i, Encoding.ASCII.GetBytes(i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        await publisher.FlushAsync();
        Assert.True(await Eventually.TrueAsync(() => receiver.Count == 3));
        Assert.Equal(["receive.0 0", "receive.1 1", "receive.2 2"], receiver.Received);
    }

    private sealed class Receiver : IBusMessageReceiver
    {
        private readonly List<string> received = [];

        public int Count
        {
            get
            {
                lock (received)
                {
                    return received.Count;
                }
            }
        }

        public List<string> Received
        {
            get
            {
                lock (received)
                {
                    return [.. received];
                }
            }
        }

        public void Receive(in BusMessage message)
        {
            var payload = Encoding.ASCII.GetString(message.Payload.ToArray());
            lock (received)
            {
                received.Add(Encoding.ASCII.GetString(message.Subject) + " " + payload);
            }
        }
    }
}
