using System.Buffers.Text;
using System.Text;

namespace Broker.Compare.Soak;

/// <summary>One subscriber's next expected sequence number per subject; payloads are <c>SUBJECT:SEQUENCE</c> (anything may follow the digits).</summary>
internal sealed class SequenceCheck
{
    private readonly long[] next = new long[SteadyTraffic.Subjects];
    private long delivered;
    private long gaps;
    private long outOfOrder;

    public long Delivered => Interlocked.Read(ref delivered);

    public long OutOfOrder => Interlocked.Read(ref outOfOrder);

    public void Receive(ReadOnlySpan<byte> payload)
    {
        var colon = payload.IndexOf((byte)':');
        if (colon < 0 || !Utf8Parser.TryParse(payload[..colon], out int subject, out _) || subject is < 0 or >= SteadyTraffic.Subjects
            || !Utf8Parser.TryParse(payload[(colon + 1)..], out long sequence, out _))
        {
            throw new InvalidOperationException($"not a soak payload: {Encoding.ASCII.GetString(payload)}");
        }

        Interlocked.Increment(ref delivered);
        var expected = Volatile.Read(ref next[subject]);
        if (sequence < expected)
        {
            Interlocked.Increment(ref outOfOrder);
            return;
        }

        Interlocked.Add(ref gaps, sequence - expected);
        Volatile.Write(ref next[subject], sequence + 1);
    }

    public bool CaughtUp(long[] published) => Enumerable.Range(0, SteadyTraffic.Subjects).All(s => Volatile.Read(ref next[s]) >= Interlocked.Read(ref published[s]));

    /// <summary>Gaps, plus what never arrived after the last message received.</summary>
    public long Lost(long[] published)
        => Interlocked.Read(ref gaps) + Enumerable.Range(0, SteadyTraffic.Subjects).Sum(s => Math.Max(0, Interlocked.Read(ref published[s]) - Volatile.Read(ref next[s])));
}
