namespace Broker.Client.Tests;

/// <summary>
/// The read path under NATS.Client.Core's own batching (issue 24): messages around and above the receive sizes (16,
/// 32 and 64 KiB), mixed with tiny ones, published without waiting so that batches larger than any receive arrive and
/// messages straddle receives and pipe segments, reach a subscriber in order and byte for byte; then a lone small
/// publish after the burst (the receive that skipped its zero-byte wait) still arrives. Against our broker and
/// nats-server.
/// </summary>
public sealed class ReceiveBatchTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static readonly int[] Sizes = [16 * 1024, 3, 64 * 1024 + 7, 100, 40_000, 16 * 1024 - 20, 0, 32 * 1024 + 1, 130_000];

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Large_and_small_messages_in_big_batches_arrive_in_order_and_intact(ServerKind kind)
    {
        const int Count = 270;
        await using var server = await ServerUnderTest.StartAsync(kind);

        // One connection both ways: the server reads the batches from it and writes the deliveries back to it.
        await using var publisher = await NatsClients.ConnectAsync(server.Url, "batches");
        await using var sub = await publisher.SubscribeCoreAsync<byte[]>("batch.data");
        await publisher.PingAsync();

        var publishing = Task.Run(async () =>
        {
            for (var i = 0; i < Count; i++)
            {
                await publisher.PublishAsync("batch.data", Payload(i));
            }

            await publisher.PingAsync();
        });

        for (var i = 0; i < Count; i++)
        {
            var message = await sub.NextAsync();
            Assert.Equal(Payload(i), message.Data ?? []);
        }

        await publishing;

        // After the burst: one small message on its own.
        await publisher.PublishAsync("batch.data", new byte[] { 42 });
        Assert.Equal([42], (await sub.NextAsync()).Data);
    }

    // The message's number in every byte, shifted by the position: a lost, repeated or shifted range shows.
    private static byte[] Payload(int index)
    {
        var payload = new byte[Sizes[index % Sizes.Length]];
        for (var i = 0; i < payload.Length; i++)
        {
            payload[i] = (byte)(index + (i * 7));
        }

        return payload;
    }
}
