using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// The receive loop's sizing (issue 24, the NATS.Client.Core rows): the buffer grows while reads fill it and shrinks
/// after short reads, as nats-server's read buffer does; the zero-byte wait is skipped only after a read of a busy
/// connection, so connections whose reads are small hold no receive buffer while idle.
/// </summary>
public sealed class ReceiveSizingTests
{
    [Fact]
    public void A_new_connection_waits_for_data_and_asks_for_the_smallest_buffer()
    {
        var sizing = default(ReceiveSizing);

        Assert.True(sizing.WaitFirst);
        Assert.Equal(ReceiveSizing.MinSize, sizing.Size);
    }

    [Fact]
    public void Full_reads_double_the_buffer_up_to_the_maximum_and_read_again_at_once()
    {
        var sizing = default(ReceiveSizing);
        var sizes = new List<int>();
        for (var i = 0; i < 5; i++)
        {
            sizing.Record(sizing.Size, sizing.Size);
            sizes.Add(sizing.Size);
            Assert.False(sizing.WaitFirst);
        }

        Assert.Equal([32 * 1024, 64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024], sizes);
    }

    [Fact]
    public void Short_reads_in_a_row_halve_the_buffer_down_to_the_minimum()
    {
        var sizing = default(ReceiveSizing);
        sizing.Record(ReceiveSizing.MinSize, ReceiveSizing.MinSize);
        sizing.Record(32 * 1024, 32 * 1024);
        Assert.Equal(ReceiveSizing.MaxSize, sizing.Size);

        for (var i = 0; i < ReceiveSizing.ShortReadsToShrink - 1; i++)
        {
            sizing.Record(100, sizing.Size);
        }

        Assert.Equal(ReceiveSizing.MaxSize, sizing.Size);
        sizing.Record(100, sizing.Size);
        Assert.Equal(32 * 1024, sizing.Size);

        for (var i = 0; i < 10 * ReceiveSizing.ShortReadsToShrink; i++)
        {
            sizing.Record(100, sizing.Size);
        }

        Assert.Equal(ReceiveSizing.MinSize, sizing.Size);
    }

    [Fact]
    public void A_read_of_more_than_half_keeps_the_size_and_restarts_the_count()
    {
        var sizing = default(ReceiveSizing);
        sizing.Record(ReceiveSizing.MinSize, ReceiveSizing.MinSize);
        for (var i = 0; i < 3 * ReceiveSizing.ShortReadsToShrink; i++)
        {
            // Short, short, ..., then a read of more than half: the count of short reads starts again.
            sizing.Record(i % ReceiveSizing.ShortReadsToShrink == ReceiveSizing.ShortReadsToShrink - 1 ? 20 * 1024 : 100, sizing.Size);
        }

        Assert.Equal(32 * 1024, sizing.Size);
    }

    [Theory]
    [InlineData(0, true)]
    [InlineData(ReceiveSizing.BusyBytes - 1, true)]
    [InlineData(ReceiveSizing.BusyBytes, false)]
    [InlineData(8 * 1024, false)]
    public void Only_two_large_reads_in_a_row_skip_the_wait(int received, bool waitFirst)
    {
        var sizing = default(ReceiveSizing);

        // One large read (a CONNECT with a long JWT) is not enough.
        sizing.Record(8 * 1024, sizing.Size);
        Assert.True(sizing.WaitFirst);
        sizing.Record(received, sizing.Size);
        Assert.Equal(waitFirst, sizing.WaitFirst);

        // A small read afterwards (the burst is over) waits without a buffer again.
        sizing.Record(200, sizing.Size);
        Assert.True(sizing.WaitFirst);
        sizing.Record(8 * 1024, sizing.Size);
        Assert.True(sizing.WaitFirst);
    }

    [Fact]
    public void A_full_read_skips_the_wait_at_once()
    {
        var sizing = default(ReceiveSizing);
        sizing.Record(ReceiveSizing.MinSize, ReceiveSizing.MinSize);
        Assert.False(sizing.WaitFirst);
    }

    [Fact]
    public void A_connections_first_reads_are_never_small_then_reads_up_to_the_threshold_are()
    {
        var sizing = default(ReceiveSizing);

        // CONNECT (a bcrypt check) or a TLS handshake's flights: parsed on a worker whatever their size.
        for (var i = 0; i < ReceiveSizing.SetupReads; i++)
        {
            Assert.False(sizing.IsSmall(100));
            sizing.Record(100, sizing.Size);
        }

        Assert.True(sizing.IsSmall(200));
        Assert.True(sizing.IsSmall(ReceiveSizing.InlineParseBytes));
        Assert.False(sizing.IsSmall(ReceiveSizing.InlineParseBytes + 1));
        Assert.False(sizing.IsSmall(ReceiveSizing.MinSize));
    }
}
