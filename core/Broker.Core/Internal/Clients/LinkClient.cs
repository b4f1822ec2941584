using System.Buffers;
using Broker.Core.Internal.Accounts;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client standing for another server's interest in one account: a leaf node link (<see cref="ClientKind.Leaf"/>)
/// or one account of a route (<see cref="ClientKind.Route"/>). Its subscriptions are the other server's interest; a
/// message matching them is sent across once per link, with the queue groups it is to serve
/// (<see cref="Leaf.LeafFanout"/>); a message that came from a link goes on to another link where that link was told
/// the first one's interest (<see cref="Leaf.LeafInterest.Sees"/>: between a route and a leaf node link to a spoke of
/// this broker, between leaf node links where one goes to a spoke, never from a route to a route).
/// </summary>
internal abstract class LinkClient(BrokerCore server, ClientKind kind, Account account) : ClientBase(server, kind, account)
{
    /// <summary>
    /// How long a link's read loop waits for the slow consumers its last read stalled before it reads on, so one stalled
    /// subscriber slows the link without stopping it.
    /// </summary>
    public static readonly TimeSpan StallLimit = TimeSpan.FromMilliseconds(100);

    /// <summary>Whether clients of <paramref name="kind"/> are links (leaf node or route).</summary>
    public static bool IsLink(ClientKind kind) => kind is ClientKind.Leaf or ClientKind.Route;

    /// <summary>
    /// Splits a link's control line (without its CRLF) into the operation and its arguments, trimmed of spaces: the
    /// operation ends at the first space or tab, as nats-server's parser reads route and leaf node lines.
    /// </summary>
    private static void SplitControlLine(ReadOnlySpan<byte> line, out ReadOnlySpan<byte> op, out ReadOnlySpan<byte> args)
    {
        var space = line.IndexOfAny((byte)' ', (byte)'\t');
        op = space < 0 ? line : line[..space];
        args = space < 0 ? [] : line[(space + 1)..].Trim((byte)' ');
    }

    /// <summary>
    /// Reads the control line at <paramref name="reader"/>'s position and splits it (<see cref="SplitControlLine"/>);
    /// false when its CRLF has not arrived yet, <paramref name="tooLong"/> then telling whether the input waiting for it
    /// already passes <paramref name="maxLine"/> (nats-server's "Maximum Control Line Exceeded").
    /// </summary>
    public static bool TryReadControlLine(ref SequenceReader<byte> reader, int maxLine, out bool tooLong, out ReadOnlySpan<byte> op, out ReadOnlySpan<byte> args)
    {
        if (!reader.TryReadTo(out ReadOnlySequence<byte> line, "\r\n"u8))
        {
            tooLong = reader.Sequence.Length > maxLine;
            op = args = default;
            return false;
        }

        tooLong = false;
        SplitControlLine(line.IsSingleSegment ? line.FirstSpan : line.ToArray(), out op, out args);
        return true;
    }

    /// <summary>
    /// Sends one message across the link, naming the queue groups it is to serve; false when the link is closed or
    /// may not carry the subject.
    /// </summary>
    public abstract bool SendMessage(ClientBase producer, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte[]?> queues);

    /// <summary>
    /// The other side's interest in <paramref name="key"/> (<c>subject</c> or <c>subject queue</c>, as RS+/LS+ name it):
    /// a subscription of this link the first time (<paramref name="known"/> false), else only its queue weight changes.
    /// </summary>
    protected void SetInterest(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> key, int weight, bool known)
    {
        if (!known)
        {
            AddSubscription(new Subscriptions.Subscription(this, subject.ToArray(), queue.IsEmpty ? null : queue.ToArray(), key.ToArray()) { QueueWeight = weight }, 0);
        }
        else if (FindSubscription(key) is { } subscription)
        {
            subscription.QueueWeight = weight;
        }
    }

    /// <summary>A subscription of this link delivered outside <see cref="Leaf.LeafFanout"/> (through a stream import's shadow): sent on its own.</summary>
    public override void Deliver(ClientBase producer, Subscriptions.Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        byte[]?[] queues = subscription.Queue is null ? [] : [subscription.Queue];
        SendMessage(producer, subject, subject, replyTo, headers, payload, queues);
    }
}

/// <summary>A link that receives the changes of an account's interest (<see cref="Leaf.LeafInterest"/>).</summary>
internal interface IInterestLink
{
    /// <summary>Sends a change: a queue key with its new weight, a plain key appearing (1) or gone (0).</summary>
    void SendInterest(string key, int n);

    /// <summary>Sends the whole interest when the link joins, with the account's loop detection subject.</summary>
    void SendInterestSnapshot(Dictionary<string, int> counts, string loopSubject);

    /// <summary>The interest the other side brought: keys with their weights (1 for plain subscriptions).</summary>
    KeyValuePair<string, int>[] RemoteInterest();

    /// <summary>The other side's weight for an interest key (1 for a plain subject), 0 when it has none.</summary>
    int WeightOf(string key);
}
