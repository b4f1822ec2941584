using System.Buffers;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// One producer's deliveries when a match holds subscriptions of links, leaf node links or routes
/// (<see cref="LinkClient"/>; nats-server's <c>processMsgResults</c> with route targets): local subscriptions are
/// served as usual; each link gets the message once, however many of its subscriptions matched, with the names of the
/// queue groups it is to serve (<c>LMSG subject + reply q1 q2 size</c>, <c>RMSG acc subject ...</c>). In a queue group
/// a client's message goes to a member drawn by weight, a route's member counting the weight its RS+ gave (a leaf node
/// link's is the fallback when no local member takes it), as nats-server picks; a link's message to a local member
/// first. A message that came from a link goes on to another link where the interest of
/// the first was relayed to the second (<see cref="LeafInterest.Sees"/>, as nats-server's <c>processMsgResults</c>):
/// between routes and the leaf node links to this broker's spokes both ways, from a spoke to the hub and back, never
/// back to its own link and never from a route to a route (routes are one hop, a full mesh; docs/scale-out.md).
/// </summary>
/// <remarks>Made at the producer's first such match; only the producer's thread uses it, so the scratch state needs no lock.</remarks>
internal sealed class LeafFanout(ClientBase producer)
{
    private Target[] targets = new Target[2];
    private int targetCount;

    /// <summary>Delivers to every plain subscription and one member of each group; returns the deliveries made.</summary>
    public int Deliver(SubListResult result, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var fromLink = LinkClient.IsLink(producer.Kind);
        var delivered = 0;
        foreach (var subscription in result.Plain)
        {
            if (subscription.Client is LinkClient link)
            {
                if (!fromLink && !subscription.Closed)
                {
                    AddTarget(link, null);
                }
            }
            else if (producer.TryDeliver(subscription, subject, deliverAs, replyTo, headers, payload))
            {
                delivered++;
            }
        }

        // A message from a link carries the groups it is for; without them it serves no group (LeafConnection).
        if (!fromLink)
        {
            foreach (var group in result.Queues)
            {
                delivered += DeliverToGroup(group, subject, deliverAs, replyTo, headers, payload);
            }
        }

        return delivered + SendToLinks(subject, deliverAs, replyTo, headers, payload);
    }

    private int SendToLinks(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var delivered = 0;
        for (var i = 0; i < targetCount; i++)
        {
            ref var target = ref targets[i];
            if (target.Link.SendMessage(producer, subject, deliverAs, replyTo, headers, payload, target.Queues.AsSpan(0, target.QueueCount)))
            {
                delivered++;
            }

            target.Link = null!;
            Array.Clear(target.Queues, 0, target.QueueCount);
            target.QueueCount = 0;
        }

        targetCount = 0;
        return delivered;
    }

    /// <summary>
    /// Delivers a message that came from a link: to every local plain subscription and to one member of each group
    /// the other side named in <paramref name="queues"/> (space separated; nats-server skips queue groups for a leaf
    /// message without a queue list), a local member first; other links get it where <see cref="Relays"/> allows.
    /// <paramref name="deliverAs"/> is the subject local subscribers see (a JetStream delivery's stored subject;
    /// <paramref name="subject"/> otherwise).
    /// </summary>
    public int DeliverFromLink(SubListResult result, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> queues)
    {
        var delivered = 0;
        foreach (var subscription in result.Plain)
        {
            if (subscription.Client is LinkClient link)
            {
                if (Relays(link) && !subscription.Closed)
                {
                    AddTarget(link, null);
                }
            }
            else if (producer.TryDeliver(subscription, subject, deliverAs, replyTo, headers, payload))
            {
                delivered++;
            }
        }

        if (!queues.IsEmpty)
        {
            foreach (var group in result.Queues)
            {
                if (Names(queues, group.Name))
                {
                    delivered += DeliverToGroup(group, subject, deliverAs, replyTo, headers, payload);
                }
            }
        }

        return delivered + SendToLinks(subject, subject, replyTo, headers, payload);
    }

    // Whether a message from the producing link may go on to another link: not back, and only where the producer's
    // interest was relayed to that link (a spoke's message to the cluster, the hub's other spokes or the hub's own hub;
    // a route's or the hub's message down to the spokes).
    private bool Relays(LinkClient link) =>
        link is IInterestLink to && producer is IInterestLink from && LeafInterest.Sees(to, from);

    private static bool Names(ReadOnlySpan<byte> queues, ReadOnlySpan<byte> name)
    {
        Span<Range> parts = stackalloc Range[32];
        var count = Math.Min(Protocol.ArgumentSplitter.Split(queues, parts), parts.Length);
        for (var i = 0; i < count; i++)
        {
            if (queues[parts[i]].SequenceEqual(name))
            {
                return true;
            }
        }

        return false;
    }

    // processMsgResults' queue pick. A client's message: a member drawn by weight (a link's counts its RS+/LS+ weight,
    // as nats-server's shadowed queue subscriptions), then the next ones in turn; a route's member is sent to like a
    // local one, a leaf node link's is the fallback when no local member or route takes it. A link's message: local
    // members only, a link (where it relays) as the fallback.
    private int DeliverToGroup(QueueGroup group, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var fromLink = LinkClient.IsLink(producer.Kind);
        var members = group.Members;
        var start = members.Length == 1 ? 0 : fromLink || !group.HasLink ? Random.Shared.Next(members.Length) : WeightedStart(members);
        Subscription? remote = null;
        for (var i = 0; i < members.Length; i++)
        {
            var index = start + i;
            if (index >= members.Length)
            {
                index -= members.Length;
            }

            var member = members[index];
            if (member.Client is LinkClient link)
            {
                if (member.Closed || (fromLink && !Relays(link)))
                {
                    continue;
                }

                if (!fromLink && link.Kind == ClientKind.Route)
                {
                    AddTarget(link, group.Name);
                    return 0;
                }

                remote ??= member;
                continue;
            }

            if (producer.TryDeliver(member, subject, deliverAs, replyTo, headers, payload))
            {
                return 1;
            }
        }

        if (remote is not null)
        {
            AddTarget((LinkClient)remote.Client, group.Name);
        }

        return 0;
    }

    // The member a weighted draw lands on: each counts its QueueWeight (1 but for a link's), as if repeated that often.
    private static int WeightedStart(Subscription[] members)
    {
        var total = 0L;
        foreach (var member in members)
        {
            total += member.QueueWeight;
        }

        var draw = Random.Shared.NextInt64(total);
        for (var i = 0; i < members.Length; i++)
        {
            draw -= members[i].QueueWeight;
            if (draw < 0)
            {
                return i;
            }
        }

        return 0;
    }

    private void AddTarget(LinkClient link, byte[]? queue)
    {
        for (var i = 0; i < targetCount; i++)
        {
            if (ReferenceEquals(targets[i].Link, link))
            {
                if (queue is not null)
                {
                    targets[i].AddQueue(queue);
                }

                return;
            }
        }

        if (targetCount == targets.Length)
        {
            Array.Resize(ref targets, targets.Length * 2);
        }

        ref var target = ref targets[targetCount++];
        target.Link = link;
        target.Queues ??= new byte[]?[4];
        if (queue is not null)
        {
            target.AddQueue(queue);
        }
    }

    private struct Target
    {
        public LinkClient Link;
        public byte[]?[] Queues;
        public int QueueCount;

        public void AddQueue(byte[] queue)
        {
            if (QueueCount == Queues.Length)
            {
                Array.Resize(ref Queues, Queues.Length * 2);
            }

            Queues[QueueCount++] = queue;
        }
    }
}
