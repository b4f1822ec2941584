using System.Buffers.Text;
using System.Text;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The other side's interest on one leaf node link (nats-server's <c>processLeafSub</c> and <c>processLeafUnsub</c>):
/// its LS+/LS- keys (<c>subject</c> or <c>subject queue</c>) with their queue weights, each key one subscription of
/// the link in its account. Read by the link's read loop, /leafz and <see cref="LeafInterest"/>.
/// </summary>
internal sealed class LeafPeerInterest
{
    private readonly LeafConnection link;
    private readonly LeafInterest interest;

    // The other side's queue weights by key (1 for a plain subject); changed by the read loop only.
    private readonly Dictionary<string, int> weights = new(StringComparer.Ordinal);
    private readonly Lock gate = new();

    public LeafPeerInterest(LeafConnection link, LeafInterest interest)
    {
        this.link = link;
        this.interest = interest;
    }

    /// <summary>The keys now, with their weights.</summary>
    public KeyValuePair<string, int>[] Snapshot()
    {
        lock (gate)
        {
            return [.. weights];
        }
    }

    /// <summary>The weight of <paramref name="key"/> (1 for a plain subject), 0 when the other side has none.</summary>
    public int WeightOf(string key)
    {
        lock (gate)
        {
            return weights.GetValueOrDefault(key);
        }
    }

    /// <summary>LS+ <c>subject [queue weight]</c>: the key becomes a subscription of the link (once) and its weight is kept.</summary>
    /// <exception cref="LeafProtocolException">The line does not parse.</exception>
    public void Add(ReadOnlySpan<byte> args)
    {
        Span<Range> parts = stackalloc Range[4];
        var count = Protocol.ArgumentSplitter.Split(args, parts);
        if (count is not (1 or 3))
        {
            throw new LeafProtocolException($"processLeafSub Parse Error: '{Encoding.UTF8.GetString(args)}'");
        }

        var subject = args[parts[0]];
        if (subject.SequenceEqual(interest.LoopSubjectBytes))
        {
            // Our own loop detection subject came back: the other side reaches us twice (nats-server's handleLeafNodeLoop).
            link.LoopDetected(sendError: true);
            return;
        }

        // A spoke drops interest it may not serve (the hub told it its permissions); a hub closes the link that sent
        // it (leafSubPermViolation). $LDS. and _GR_ subjects always pass.
        var exempt = subject.StartsWith("$LDS."u8) || subject.StartsWith("$GR."u8) || subject.StartsWith("_GR_."u8);
        if (!exempt && !SubjectValidator.HasWildcard(subject) && !link.LinkPermissions.CanPublish(subject))
        {
            if (link.IsAccepted)
            {
                var error = $"Permissions Violation for Subscription to \"{Encoding.UTF8.GetString(subject)}\"";
                LeafLog.RemoteError(link.Server.Logger, link.Redacted, error);
                link.Close("Protocol Violation", $"-ERR '{error}'\r\n");
            }

            return;
        }

        var key = count == 1 ? subject : args[parts[0].Start..parts[1].End];
        var weight = 1;
        if (count == 3 && (!Utf8Parser.TryParse(args[parts[2]], out weight, out var consumed) || consumed != args[parts[2]].Length || weight < 0))
        {
            weight = 1;
        }

        var keyString = Encoding.UTF8.GetString(key);
        bool known;
        lock (gate)
        {
            known = weights.ContainsKey(keyString);
            weights[keyString] = weight;
        }

        link.SetPeerInterest(subject, count == 3 ? args[parts[1]] : default, key, weight, known);

        interest.LinkChanged(link, keyString);
    }

    /// <summary>LS- <c>subject [queue]</c>: the key exactly.</summary>
    public void Remove(ReadOnlySpan<byte> args)
    {
        var key = Encoding.UTF8.GetString(args);
        lock (gate)
        {
            weights.Remove(key);
        }

        link.RemovePeerSubscription(args);
        interest.LinkChanged(link, key);
    }
}
